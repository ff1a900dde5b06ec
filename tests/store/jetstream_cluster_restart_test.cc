// A restarted replica that takes the lead must still hold every retained checkpoint document and
// every journal entry the newest checkpoint needs. On a 3-node cluster (R3 streams) the store
// writes checkpoints that prune older documents and compact the journal, as a sidecar does; then
// one replica is SIGKILLed and restarted (so it replays its Raft log on start) and made the
// leader of every stream, and a new store handle reads everything back through it.
//
// This is the case that made nats-server 2.9.10 lose data when the store removed documents with
// stream purges: a replica replaying a purge from its log on start removes every message below
// the purge's last stream sequence, whatever the purge's subject filter, so retained documents
// and needed journal entries vanished from it and, once it led the stream, from the cluster.
// The store now removes single messages by sequence (docs/jetstream-store.md, "Removing
// messages"), whose replay removes that message only.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/canonical.h"
#include "store/jetstream/jetstream_store.h"
#include "tests/store/jetstream_test_util.h"
#include "tests/store/store_test_util.h"
#include "tests/support/nats_cluster.h"

namespace agentckpt::testing {
namespace {

constexpr char kAgent[] = "agent-js-restart";
constexpr int kKeep = 3;
constexpr int kCheckpoints = 8;
constexpr int kEntriesPerCheckpoint = 5;
constexpr int kHealthyTimeoutMs = 30000;
constexpr int kLeaderTimeoutMs = 60000;
constexpr int64_t kNowMs = 1'700'000'000'000;

TEST(JetStreamClusterRestartTest, ARestartedReplicaLeadingEveryStreamStillHoldsWhatIsRetained) {
  NatsClusterProcess cluster;
  std::unique_ptr<JetStreamStore> store = OpenJetStreamPrefix(cluster.url(), "RESTART", 3);
  ASSERT_NE(store, nullptr);
  const std::vector<std::string> streams = {store->AgentsStream(), store->CheckpointsStream(),
                                            store->JournalStream()};
  for (const std::string& stream : streams) {
    STORE_ASSERT_OK(cluster.WaitForStreamHealthy(stream, 3, kHealthyTimeoutMs));
  }
  auto lease = store->AcquireLease(kAgent, "writer", 24LL * 3600 * 1000, kNowMs);
  STORE_ASSERT_OK(lease);
  const LeaseToken token{lease->holder, lease->epoch};

  // Appends, then a checkpoint through them that compacts the journal up to the previous
  // checkpoint's position and keeps the newest kKeep documents.
  std::vector<JournalEntry> written;
  std::string prev = kJournalGenesisSha256;
  int64_t compact_through = 0;
  for (int64_t s = 1; s <= kCheckpoints; ++s) {
    auto entries = JournalChain(kAgent, static_cast<int64_t>(written.size()) + 1,
                                kEntriesPerCheckpoint, token.epoch, prev);
    STORE_ASSERT_OK(store->AppendJournal(kAgent, entries, token));
    prev = entries.back().sha256;
    written.insert(written.end(), entries.begin(), entries.end());
    Checkpoint cp = MakeCheckpoint(kAgent, s);
    cp.journal = JournalPosition{entries.back().sequence, entries.back().sha256};
    auto sealed = Seal(cp);
    STORE_ASSERT_OK(sealed);
    PutOptions opts{kKeep};
    opts.lease = token;
    opts.journal_compact_through = compact_through;
    STORE_ASSERT_OK(store->Put(*sealed, opts));
    compact_through = entries.back().sequence;
  }
  store.reset();

  auto leader = cluster.StreamLeader(streams[1]);
  STORE_ASSERT_OK(leader);
  const int victim = (*leader + 1) % cluster.size();
  cluster.Kill(victim);
  cluster.Restart(victim);  // replays its Raft log: the prunes and compactions above included
  for (const std::string& stream : streams) {
    STORE_ASSERT_OK(cluster.WaitForStreamHealthy(stream, 3, kHealthyTimeoutMs));
    STORE_ASSERT_OK(cluster.MoveStreamLeader(stream, victim, kLeaderTimeoutMs));
  }

  std::unique_ptr<JetStreamStore> check = OpenJetStreamPrefix(cluster.url(), "RESTART", 3);
  ASSERT_NE(check, nullptr);
  for (int64_t s = kCheckpoints - kKeep + 1; s <= kCheckpoints; ++s) {
    auto cp = check->GetBySequence(kAgent, s);
    ASSERT_TRUE(cp.ok()) << "retained checkpoint " << s << ": " << cp.status().ToString();
  }
  auto latest = check->GetLatestVerified(kAgent);
  STORE_ASSERT_OK(latest);
  EXPECT_EQ(latest->checkpoint.sequence_number, kCheckpoints);
  EXPECT_TRUE(latest->skipped.empty());
  // Every entry above the last compaction mark reads back, in order and intact.
  auto journal = check->ReadJournal(kAgent, 0);
  STORE_ASSERT_OK(journal);
  const int64_t first_needed = compact_through - kEntriesPerCheckpoint + 1;
  std::vector<JournalEntry> needed(written.begin() + (first_needed - 1), written.end());
  ASSERT_GE(journal->size(), needed.size());
  std::vector<JournalEntry> tail(journal->end() - static_cast<std::ptrdiff_t>(needed.size()),
                                 journal->end());
  EXPECT_EQ(tail, needed);
}

}  // namespace
}  // namespace agentckpt::testing
