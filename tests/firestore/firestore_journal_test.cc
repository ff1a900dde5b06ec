// FirestoreStore's journal against the emulator (a real child process): requests per append,
// writes per document, compaction in the checkpoint's commit, and appends under injected faults.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/firestore/firestore_store.h"
#include "store/journal_load.h"
#include "tests/firestore/emulator_suite.h"
#include "tests/store/store_test_util.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

constexpr char kAgent[] = "agent-f";
constexpr int64_t kNow = 1'700'000'000'000;

class FirestoreJournalTest : public EmulatorSuite {
 protected:
  void SetUp() override {
    StartTest("j-");
    // Hedging off: these tests count the requests an append makes, and a hedge (a second copy
    // of a request slow to answer, e.g. under a sanitizer) would be counted with them.
    store_ = OpenEmulatorStore(emulator_->host_port(), project_, 2000, 20000,
                               /*hedge_after_ms=*/0);
    ASSERT_NE(store_, nullptr);
    // A restarted sidecar: a first holder, then this one taking over (and fencing the journal).
    ASSERT_TRUE(store_->AcquireLease(kAgent, "pod-0/00", 15'000, kNow).ok());
    auto lease = store_->AcquireOrTakeOverLease(kAgent, "pod-1/aa", 15'000, kNow + 1,
                                                [](const std::string&) { return true; });
    ASSERT_TRUE(lease.ok()) << lease.status().ToString();
    lease_ = LeaseToken{lease->holder, lease->epoch};
  }

  // The next `n` entries of the chain.
  std::vector<JournalEntry> Next(int n) {
    std::vector<JournalEntry> out = JournalChain(kAgent, last_ + 1, n, lease_.epoch, prev_);
    last_ += n;
    prev_ = out.back().sha256;
    return out;
  }

  StatusOr<PutResult> CheckpointNow(int64_t sequence, int64_t compact_through) {
    Checkpoint cp = MakeCheckpoint(kAgent, sequence);
    cp.journal = JournalPosition{last_, prev_};
    PutOptions opts;
    opts.lease = lease_;
    opts.journal_compact_through = compact_through;
    return store_->Put(SealForTest(std::move(cp)), opts);
  }

  json Stats() {
    auto stats = emulator_->Stats();
    EXPECT_TRUE(stats.ok());
    return stats.ok() ? *stats : json::object();
  }
  void ResetStats() { ASSERT_TRUE(emulator_->Request("DELETE", "/emulator/v1/stats").ok()); }

  std::unique_ptr<FirestoreStore> store_;
  LeaseToken lease_;
  int64_t last_ = 0;
  std::string prev_ = kJournalGenesisSha256;
};

TEST_F(FirestoreJournalTest, SequentialAppendIsOneRequestAndWritesEachDocumentOnce) {
  ResetStats();
  const uint64_t before = store_->requests_sent();
  constexpr int kAppends = 200;
  for (int i = 0; i < kAppends; ++i)
    STORE_ASSERT_OK(store_->AppendJournal(kAgent, Next(1), lease_));
  EXPECT_EQ(store_->requests_sent() - before, static_cast<uint64_t>(kAppends));
  json stats = Stats();
  EXPECT_EQ(stats["requests"].get<uint64_t>(), static_cast<uint64_t>(kAppends));
  // Every entry is its own document, written once; the agent record is not written at all.
  const json& writes = stats["documentWrites"];
  EXPECT_EQ(writes["documents"].get<uint64_t>(), static_cast<uint64_t>(kAppends));
  EXPECT_EQ(writes["hottest"]["writes"].get<uint64_t>(), 1u) << writes.dump();
  auto read = store_->ReadJournal(kAgent, 0);
  STORE_ASSERT_OK(read);
  EXPECT_EQ(read->size(), static_cast<size_t>(kAppends));
}

TEST_F(FirestoreJournalTest, AGroupOfAppendsSharesOneCommit) {
  const uint64_t before = store_->requests_sent();
  STORE_ASSERT_OK(store_->AppendJournal(kAgent, Next(64), lease_));
  EXPECT_EQ(store_->requests_sent() - before, 1u);
}

TEST_F(FirestoreJournalTest, CompactionRidesInTheCheckpointCommit) {
  STORE_ASSERT_OK(store_->AppendJournal(kAgent, Next(100), lease_));
  STORE_ASSERT_OK(CheckpointNow(1, 0));  // warms the record and listing caches
  STORE_ASSERT_OK(store_->AppendJournal(kAgent, Next(10), lease_));
  uint64_t before = store_->requests_sent();
  auto put = CheckpointNow(2, 100);  // the entries the checkpoint before includes
  STORE_ASSERT_OK(put);
  EXPECT_EQ(store_->requests_sent() - before, 1u);
  // Slot 1 holds the fence's sequence: compaction spares it (firestore_store.h).
  EXPECT_EQ(put->journal_compacted, 99);
  auto stats = store_->GetJournalStats(kAgent);
  STORE_ASSERT_OK(stats);
  EXPECT_EQ(stats->entries, 10);
  EXPECT_EQ(stats->first_sequence, 101);
  // A tail larger than one commit: the rest goes out in further commits right after.
  STORE_ASSERT_OK(store_->AppendJournal(kAgent, Next(400), lease_));
  STORE_ASSERT_OK(store_->AppendJournal(kAgent, Next(400), lease_));
  STORE_ASSERT_OK(CheckpointNow(3, 110));
  put = CheckpointNow(4, 910);
  STORE_ASSERT_OK(put);
  EXPECT_EQ(put->journal_compacted, 800);
  stats = store_->GetJournalStats(kAgent);
  STORE_ASSERT_OK(stats);
  EXPECT_EQ(stats->entries, 0);
  EXPECT_EQ(stats->last_sequence, 910);
}

// Dropped replies and refused requests: the store's retries meet their own earlier, applied
// attempt and recognise it; every append that returns OK is read back and folds.
TEST_F(FirestoreJournalTest, AppendsUnderInjectedFaultsAreStoredExactlyOnce) {
  ASSERT_TRUE(
      emulator_->SetFaults({{"dropRate", 0.2}, {"errorRate", 0.1}, {"errorStatus", 503}}).ok());
  int ok = 0;
  for (int i = 0; i < 60; ++i) {
    std::vector<JournalEntry> batch = Next(1 + i % 3);
    Status s = store_->AppendJournal(kAgent, batch, lease_);
    if (!s.ok()) {
      // Not acknowledged: a real writer answers an error; here the chain continues after it
      // only if it was stored after all.
      ASSERT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
      ASSERT_TRUE(emulator_->SetFaults(json::object()).ok());
      STORE_ASSERT_OK(store_->AppendJournal(kAgent, batch, lease_));
      ASSERT_TRUE(emulator_->SetFaults({{"dropRate", 0.2}, {"errorRate", 0.1}}).ok());
    }
    ++ok;
  }
  ASSERT_TRUE(emulator_->SetFaults(json::object()).ok());
  EXPECT_GT(Stats()["drops"].get<uint64_t>(), 0u);
  Checkpoint empty;
  empty.agent_id = kAgent;
  JournalLoad load = FoldStoredJournal(store_.get(), &empty);
  EXPECT_TRUE(load.error.empty()) << load.error;
  EXPECT_FALSE(load.fold.stopped) << load.fold.stop_reason;
  EXPECT_EQ(load.fold.last_sequence, last_);
  EXPECT_EQ(empty.context_summary.completed_steps, last_);
  EXPECT_EQ(ok, 60);
}

}  // namespace
}  // namespace agentckpt::testing
