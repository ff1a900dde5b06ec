// The journal part of the CheckpointStore contract (docs/journal.md): appends read back in
// order, sequences never reused, fencing by the writer lease (also after compaction), compaction
// with a checkpoint put, and the restore fold (store/journal_load.h). Compiled into each
// backend's contract test executable beside store_contract.cc.
#include <cstdint>
#include <string>
#include <vector>

#include "store/journal_load.h"
#include "tests/store/store_contract.h"
#include "tests/store/store_test_util.h"

namespace agentckpt::testing {
namespace {

constexpr char kAgent[] = "agent-j";
constexpr int64_t kNow = 1'700'000'000'000;
constexpr int64_t kLeaseTtl = 15'000;

std::vector<JournalEntry> Chain(int64_t first, int n, int64_t epoch,
                                std::string prev = kJournalGenesisSha256) {
  return JournalChain(kAgent, first, n, epoch, std::move(prev));
}

LeaseToken Take(CheckpointStore& store, const std::string& holder, int64_t now_ms) {
  auto lease = store.AcquireOrTakeOverLease(kAgent, holder, kLeaseTtl, now_ms,
                                            [](const std::string&) { return true; });
  EXPECT_TRUE(lease.ok()) << lease.status().ToString();
  return lease.ok() ? LeaseToken{lease->holder, lease->epoch} : LeaseToken{};
}

// A checkpoint that includes the journal through `entry`, put with compaction through
// `compact_through`.
StatusOr<PutResult> CheckpointThrough(CheckpointStore& store, int64_t sequence,
                                      const JournalEntry& entry, int64_t compact_through,
                                      const LeaseToken& lease) {
  Checkpoint cp = MakeCheckpoint(kAgent, sequence);
  cp.journal = JournalPosition{entry.sequence, entry.sha256};
  PutOptions opts;
  opts.lease = lease;
  opts.journal_compact_through = compact_through;
  return store.Put(SealForTest(std::move(cp)), opts);
}

TEST_P(StoreContractTest, JournalAppendsAreReadBackInOrder) {
  ASSERT_TRUE(store().SupportsJournal());
  LeaseToken lease = Take(store(), "pod-1/aa", kNow);
  auto first = Chain(1, 3, lease.epoch);
  STORE_ASSERT_OK(store().AppendJournal(kAgent, first, lease));
  auto more = Chain(4, 2, lease.epoch, first.back().sha256);
  STORE_ASSERT_OK(store().AppendJournal(kAgent, more, lease));
  auto read = other_handle().ReadJournal(kAgent, 2);
  STORE_ASSERT_OK(read);
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ((*read)[0], first[2]);
  EXPECT_EQ((*read)[2], more[1]);
  auto stats = other_handle().GetJournalStats(kAgent);
  STORE_ASSERT_OK(stats);
  EXPECT_EQ(stats->entries, 5);
  EXPECT_EQ(stats->first_sequence, 1);
  EXPECT_EQ(stats->last_sequence, 5);
  EXPECT_GT(stats->bytes, 0);
}

TEST_P(StoreContractTest, JournalSequenceIsNeverReusedEvenAfterCompaction) {
  LeaseToken lease = Take(store(), "pod-1/aa", kNow);
  auto entries = Chain(1, 3, lease.epoch);
  STORE_ASSERT_OK(store().AppendJournal(kAgent, entries, lease));
  STORE_EXPECT_CODE(store().AppendJournal(kAgent, Chain(3, 1, lease.epoch), lease), kAlreadyExists);
  auto put = CheckpointThrough(store(), 1, entries.back(), 3, lease);
  STORE_ASSERT_OK(put);
  EXPECT_EQ(put->journal_compacted, 3);
  auto stats = other_handle().GetJournalStats(kAgent);
  STORE_ASSERT_OK(stats);
  EXPECT_EQ(stats->entries, 0);
  EXPECT_EQ(stats->last_sequence, 3);
  STORE_EXPECT_CODE(other_handle().AppendJournal(kAgent, Chain(2, 1, lease.epoch), lease),
                    kAlreadyExists);
  STORE_EXPECT_OK(store().AppendJournal(kAgent, Chain(4, 1, lease.epoch), lease));
}

TEST_P(StoreContractTest, JournalOfAFencedWriterTakesNothing) {
  LeaseToken old_lease = Take(store(), "pod-1/aa", kNow);
  auto entries = Chain(1, 2, old_lease.epoch);
  STORE_ASSERT_OK(store().AppendJournal(kAgent, entries, old_lease));
  LeaseToken new_lease = Take(other_handle(), "pod-2/bb", kNow + 1);
  ASSERT_GT(new_lease.epoch, old_lease.epoch);
  Status stale =
      store().AppendJournal(kAgent, Chain(3, 2, old_lease.epoch, entries[1].sha256), old_lease);
  EXPECT_EQ(stale.code(), StatusCode::kFailedPrecondition) << stale.ToString();
  EXPECT_EQ(stale.message().rfind("lease lost", 0), 0u) << stale.message();
  auto next = Chain(3, 1, new_lease.epoch, entries[1].sha256);
  STORE_ASSERT_OK(other_handle().AppendJournal(kAgent, next, new_lease));
  auto read = store().ReadJournal(kAgent, 0);
  STORE_ASSERT_OK(read);
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ((*read)[2], next[0]);
}

// The new holder checkpoints twice (compacting the old holder's entries and its own first one);
// the old holder, still believing in its lease, must not slip an entry into a freed slot.
TEST_P(StoreContractTest, JournalWriterStaysFencedAfterTheNewHolderCompacts) {
  LeaseToken old_lease = Take(store(), "pod-1/aa", kNow);
  auto entries = Chain(1, 2, old_lease.epoch);
  STORE_ASSERT_OK(store().AppendJournal(kAgent, entries, old_lease));
  LeaseToken new_lease = Take(other_handle(), "pod-2/bb", kNow + 1);
  auto next = Chain(3, 3, new_lease.epoch, entries[1].sha256);
  STORE_ASSERT_OK(other_handle().AppendJournal(kAgent, next, new_lease));
  STORE_ASSERT_OK(CheckpointThrough(other_handle(), 1, next[0], 0, new_lease));
  STORE_ASSERT_OK(CheckpointThrough(other_handle(), 2, next[2], 3, new_lease));
  for (int64_t seq : {3, 4}) {
    Status stale = store().AppendJournal(kAgent, Chain(seq, 1, old_lease.epoch), old_lease);
    EXPECT_EQ(stale.code(), StatusCode::kFailedPrecondition) << seq << ": " << stale.ToString();
  }
  auto read = other_handle().ReadJournal(kAgent, 3);
  STORE_ASSERT_OK(read);
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0], next[1]);
}

TEST_P(StoreContractTest, JournalRejectsEntriesThatAreNotConsecutiveOrNotTheAgents) {
  LeaseToken lease = Take(store(), "pod-1/aa", kNow);
  auto entries = Chain(1, 3, lease.epoch);
  entries.erase(entries.begin() + 1);
  STORE_EXPECT_CODE(store().AppendJournal(kAgent, entries, lease), kInvalidArgument);
  STORE_EXPECT_CODE(store().AppendJournal("other-agent", Chain(1, 1, 1), std::nullopt),
                    kInvalidArgument);
  auto read = store().ReadJournal(kAgent, 0);
  STORE_ASSERT_OK(read);
  EXPECT_TRUE(read->empty());
}

// Restore: the latest checkpoint plus the entries after its position, folded in order.
TEST_P(StoreContractTest, JournalIsFoldedIntoTheLatestCheckpointOnLoad) {
  LeaseToken lease = Take(store(), "pod-1/aa", kNow);
  auto entries = Chain(1, 6, lease.epoch);
  STORE_ASSERT_OK(store().AppendJournal(kAgent, entries, lease));
  STORE_ASSERT_OK(CheckpointThrough(store(), 1, entries[3], 0, lease));
  auto latest = other_handle().GetLatestVerified(kAgent);
  STORE_ASSERT_OK(latest);
  Checkpoint cp = latest->checkpoint;
  JournalLoad load = FoldStoredJournal(&other_handle(), &cp);
  EXPECT_TRUE(load.error.empty()) << load.error;
  EXPECT_EQ(load.base_sequence, 4);
  EXPECT_EQ(load.fold.applied, 2);
  EXPECT_FALSE(load.fold.stopped) << load.fold.stop_reason;
  ASSERT_TRUE(cp.journal.has_value());
  EXPECT_EQ(cp.journal->sequence, 6);
  EXPECT_EQ(cp.context_summary.completed_steps, 6);
}

// A sidecar takes up an agent's context only once the checkpoint and journal reads succeed
// (docs/journal.md, "Fencing"): for an agent the store has never seen (only a lease, or not even
// that) they must answer "none" (kNotFound, no entries), not an error, or it would never start.
TEST_P(StoreContractTest, ANewAgentHasNoCheckpointAndAnEmptyJournal) {
  STORE_EXPECT_CODE(store().GetLatestVerified("agent-new"), kNotFound);
  Checkpoint fresh;
  fresh.agent_id = "agent-new";
  JournalLoad unseen = FoldStoredJournal(&store(), &fresh);
  EXPECT_TRUE(unseen.error.empty()) << unseen.error;
  EXPECT_EQ(unseen.fold.applied, 0);
  (void)Take(store(), "pod-1/aa", kNow);  // kAgent: a lease, nothing else
  STORE_EXPECT_CODE(other_handle().GetLatestVerified(kAgent), kNotFound);
  Checkpoint leased;
  leased.agent_id = kAgent;
  JournalLoad load = FoldStoredJournal(&other_handle(), &leased);
  EXPECT_TRUE(load.error.empty()) << load.error;
  EXPECT_EQ(load.fold.applied, 0);
  EXPECT_FALSE(load.fold.stopped) << load.fold.stop_reason;
}

}  // namespace
}  // namespace agentckpt::testing
