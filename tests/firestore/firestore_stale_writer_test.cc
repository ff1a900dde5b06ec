// A writer fenced out more lease changes ago than the Firestore store's fence markers reach
// (docs/journal.md "Fencing": compaction spares the last 8), and still running, as a sidecar
// paused that long would be. Its next append goes to a sequence whose fence is compacted, so the
// store takes it; the sidecar must still not answer it durable: the writer confirms its lease
// before it answers (LeaseKeeper::ConfirmHeld), finds it taken over, and answers "lease lost".
// Real parts: the emulator, the Firestore store, JournalWriter and LeaseKeeper; a fake clock.
#include <gtest/gtest.h>

#include <string>

#include "common/fake_env.h"
#include "context/journal_writer.h"
#include "sidecar/lease_keeper.h"
#include "store/journal_load.h"
#include "tests/firestore/emulator_process.h"
#include "tests/store/store_test_util.h"
#include "tests/support/fixtures.h"

namespace agentckpt::testing {
namespace {

constexpr char kAgent[] = "agent-stale";
constexpr char kProject[] = "stale-writer";
constexpr int64_t kTtlMs = 15'000;
constexpr int kLeaseChanges = 12;  // more than the 8 fences compaction spares

std::string StepPatch(int step) {
  return "{\"contextSummary\":{\"completedSteps\":" + std::to_string(step) + "}}";
}

// Lease changes by other sidecars, each after the previous lease expired: the new holder appends
// one entry after `head` and checkpoints through it, compacting the journal behind it. Returns
// the new head.
JournalPosition ChangeHoldersAndCompact(FakeEnv* env, CheckpointStore* store,
                                        JournalPosition head) {
  for (int i = 0; i < kLeaseChanges; ++i) {
    env->AdvanceMicros((kTtlMs + 1'000) * 1'000);
    auto lease =
        store->AcquireLease(kAgent, "pod-b/" + std::to_string(i), kTtlMs, env->NowUnixMillis());
    if (!lease.ok()) {
      ADD_FAILURE() << "lease change " << i << ": " << lease.status().ToString();
      return head;
    }
    LeaseToken token{lease->holder, lease->epoch};
    auto entries = JournalChain(kAgent, head.sequence + 1, 1, lease->epoch, head.sha256);
    Status appended = store->AppendJournal(kAgent, entries, token);
    if (!appended.ok()) {
      ADD_FAILURE() << "append after lease change " << i << ": " << appended.ToString();
      return head;
    }
    head = JournalPosition{entries[0].sequence, entries[0].sha256};
    Checkpoint cp = MakeCheckpoint(kAgent, i + 1);
    cp.journal = head;
    PutOptions opts;
    opts.lease = token;
    opts.journal_compact_through = head.sequence;
    auto put = store->Put(SealForTest(std::move(cp)), opts);
    if (!put.ok()) {
      ADD_FAILURE() << "checkpoint after lease change " << i << ": " << put.status().ToString();
      return head;
    }
  }
  return head;
}

class FirestoreStaleWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(emulator_.Start().ok());
    stale_store_ = OpenEmulatorStore(emulator_.host_port(), kProject);
    other_store_ = OpenEmulatorStore(emulator_.host_port(), kProject);
    LeaseKeeperOptions o;
    o.agent_id = kAgent;
    o.holder = "pod-a/1";
    o.ttl_ms = kTtlMs;
    keeper_ = std::make_unique<LeaseKeeper>(&env_, stale_store_.get(), o);
    auto lease = keeper_->TryAcquire();
    ASSERT_TRUE(lease.ok()) << lease.status().ToString();
    JournalOptions jo;
    jo.agent_id = kAgent;
    writer_ = std::make_unique<JournalWriter>(&env_, stale_store_.get(), jo);
    writer_->Activate(LeaseToken{lease->holder, lease->epoch}, {0, kJournalGenesisSha256}, 0, 0);
  }
  // Records `step` and waits for its answer.
  StatusOr<JournalAck> Update(int step) {
    auto pos = writer_->Record(JournalKind::kContextPatch, StepPatch(step));
    if (!pos.ok()) return pos.status();
    return writer_->Await(pos->sequence);
  }

  EmulatorProcess emulator_;
  FakeEnv env_;
  std::unique_ptr<FirestoreStore> stale_store_;
  std::unique_ptr<FirestoreStore> other_store_;
  std::unique_ptr<LeaseKeeper> keeper_;
  std::unique_ptr<JournalWriter> writer_;
};

TEST_F(FirestoreStaleWriterTest, AWriterFencedOutTwelveLeaseChangesAgoIsNotAnsweredDurable) {
  writer_->set_confirm_lease([this] { return keeper_->ConfirmHeld(); });
  auto first = Update(1);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->durable);
  ChangeHoldersAndCompact(&env_, other_store_.get(), writer_->head());
  auto stale = Update(2);
  ASSERT_FALSE(stale.ok()) << "a fenced-out writer's update was answered durable";
  EXPECT_EQ(stale.status().code(), StatusCode::kFailedPrecondition) << stale.status().ToString();
  EXPECT_EQ(stale.status().message().rfind("lease lost", 0), 0u) << stale.status().ToString();
  // And it stays fenced.
  EXPECT_EQ(Update(3).status().code(), StatusCode::kFailedPrecondition);
}

// The same writer without the confirmation: the store takes the append (its fence is compacted)
// and the writer would answer it durable although no restore folds it. This is the case the
// confirmation exists for; if the store ever refuses it by itself, this test says so.
TEST_F(FirestoreStaleWriterTest, WithoutTheConfirmationTheStoreAloneWouldTakeTheStaleAppend) {
  auto first = Update(1);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  JournalPosition head = ChangeHoldersAndCompact(&env_, other_store_.get(), writer_->head());
  auto stale = Update(2);
  ASSERT_TRUE(stale.ok()) << stale.status().ToString();
  auto latest = other_store_->GetLatestVerified(kAgent);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  Checkpoint cp = latest->checkpoint;
  JournalLoad load = FoldStoredJournal(other_store_.get(), &cp);
  EXPECT_TRUE(load.error.empty()) << load.error;
  EXPECT_EQ(load.fold.applied, 0);  // the stale step 2 is in no restore
  ASSERT_TRUE(cp.journal.has_value());
  EXPECT_EQ(cp.journal->sequence, head.sequence);
}

}  // namespace
}  // namespace agentckpt::testing
