// SqliteStore's journal: durable, fenced appends; reads; compaction with a checkpoint put.
#include <gtest/gtest.h>

#include <filesystem>

#include "checkpoint/canonical.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/store/raw_sqlite.h"
#include "tests/store/store_test_util.h"
#include "tests/store/sync_counting_vfs.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

using testing::RawSqlite;
using testing::SyncCountingVfs;
using testing::TempDir;

constexpr char kAgent[] = "agent-j";

std::vector<JournalEntry> Entries(int64_t first, int n, int64_t epoch,
                                  std::string prev = kJournalGenesisSha256) {
  return testing::JournalChain(kAgent, first, n, epoch, std::move(prev));
}

class SqliteJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = SqliteStore::Open(dir_.File("j.db"));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    auto lease = store_->AcquireLease(kAgent, "holder-1", 60000, 1000);
    ASSERT_TRUE(lease.ok()) << lease.status().ToString();
    lease_ = LeaseToken{lease->holder, lease->epoch};
  }
  TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
  LeaseToken lease_;
};

TEST_F(SqliteJournalTest, AppendsAreReadBackInOrderAndSurviveReopening) {
  EXPECT_TRUE(store_->SupportsJournal());
  auto first = Entries(1, 3, lease_.epoch);
  ASSERT_TRUE(store_->AppendJournal(kAgent, first, lease_).ok());
  auto more = Entries(4, 2, lease_.epoch, first.back().sha256);
  ASSERT_TRUE(store_->AppendJournal(kAgent, more, lease_).ok());
  store_.reset();
  auto reopened = SqliteStore::Open(dir_.File("j.db"));
  ASSERT_TRUE(reopened.ok());
  auto read = (*reopened)->ReadJournal(kAgent, 2);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ((*read)[0], first[2]);
  EXPECT_EQ((*read)[2], more[1]);
  auto stats = (*reopened)->GetJournalStats(kAgent);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->entries, 5);
  EXPECT_EQ(stats->first_sequence, 1);
  EXPECT_EQ(stats->last_sequence, 5);
  EXPECT_GT(stats->bytes, 0);
}

TEST_F(SqliteJournalTest, EachAppendIsOneFsyncedCommit) {
  store_.reset();
  SyncCountingVfs vfs;
  auto s = SqliteStore::Open(dir_.File("j.db"));
  ASSERT_TRUE(s.ok());
  // The first commit into a fresh log also syncs the log header; measure the later ones.
  auto warm = Entries(1, 1, lease_.epoch);
  ASSERT_TRUE((*s)->AppendJournal(kAgent, warm, lease_).ok());
  vfs.Reset();
  auto batch = Entries(2, 8, lease_.epoch, warm.back().sha256);
  ASSERT_TRUE((*s)->AppendJournal(kAgent, batch, lease_).ok());
  const int group = vfs.wal_syncs();
  EXPECT_GE(group, 1) << "the append returned before the log was synced";
  vfs.Reset();
  ASSERT_TRUE(
      (*s)->AppendJournal(kAgent, Entries(10, 1, lease_.epoch, batch.back().sha256), lease_).ok());
  EXPECT_GE(vfs.wal_syncs(), 1);
  EXPECT_EQ(group, vfs.wal_syncs()) << "a group of 8 entries costs what one entry costs";
  s->reset();
}

// An append writes the journal table's leaf page and nothing else: the agent's row is not
// rewritten, there is no index (schema version 5 keys the rows by the agent's slot and the
// sequence), and an entry of ~1.3 KB (a ~1 KB merge patch) stays in its leaf, so no overflow,
// free-list or header page either. Measured by the growth of the write-ahead log, one frame per
// page written.
TEST_F(SqliteJournalTest, AnAppendWritesOnlyTheJournalsLeafPage) {
  const std::string wal = dir_.File("j.db-wal");
  const auto frame = static_cast<std::uintmax_t>(4096 + 24);  // page size + frame header
  std::string prev = kJournalGenesisSha256;
  int64_t seq = 0;
  for (size_t payload_bytes : {40u, 1000u}) {
    int one_frame = 0;
    for (int i = 0; i < 20; ++i) {
      auto e = Entries(++seq, 1, lease_.epoch, prev);
      e[0].payload = "{\"contextSummary\":{\"draftContent\":\"" +
                     std::string(payload_bytes, static_cast<char>('a' + i % 26)) + "\"}}";
      SealJournalEntry(&e[0]);
      prev = e.back().sha256;
      const std::uintmax_t before = std::filesystem::file_size(wal);
      ASSERT_TRUE(store_->AppendJournal(kAgent, e, lease_).ok());
      const std::uintmax_t frames = (std::filesystem::file_size(wal) - before) / frame;
      if (frames == 1) ++one_frame;
      // A split adds the new leaf, the parent and the header: never an overflow page.
      EXPECT_LE(frames, 4u) << payload_bytes << "-byte payload, append " << i;
    }
    // About three 1.3 KB entries fit in a leaf, so every third of those appends splits one.
    EXPECT_GE(one_frame, payload_bytes < 100 ? 17 : 12)
        << payload_bytes << "-byte payloads: most appends should write exactly the table leaf";
  }
  EXPECT_EQ(store_->GetJournalStats(kAgent)->last_sequence, seq);
}

TEST_F(SqliteJournalTest, AFencedWriterAppendsNothing) {
  auto taken = store_->AcquireOrTakeOverLease(kAgent, "holder-2", 60000, 2000,
                                              [](const std::string&) { return true; });
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  Status st = store_->AppendJournal(kAgent, Entries(1, 2, lease_.epoch), lease_);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message().rfind("lease lost", 0), 0u) << st.message();
  EXPECT_TRUE(store_->ReadJournal(kAgent, 0)->empty());
}

// An append skips reading the agent's row when SQLite's data version shows no commit since this
// connection's last append. A lease taken over through the same connection, or through another
// one (here a plain SQL connection, as another process would be), must still fence it.
TEST_F(SqliteJournalTest, ATakeoverAfterAppendsFencesTheNextAppend) {
  auto first = Entries(1, 2, lease_.epoch);
  ASSERT_TRUE(store_->AppendJournal(kAgent, first, lease_).ok());
  auto taken = store_->AcquireOrTakeOverLease(kAgent, "holder-2", 60000, 2000,
                                              [](const std::string&) { return true; });
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  Status st = store_->AppendJournal(kAgent, Entries(3, 1, lease_.epoch, first[1].sha256), lease_);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  LeaseToken now{taken->holder, taken->epoch};
  auto next = Entries(3, 1, now.epoch, first[1].sha256);
  ASSERT_TRUE(store_->AppendJournal(kAgent, next, now).ok());

  RawSqlite other(dir_.File("j.db"));
  ASSERT_TRUE(other.Exec("UPDATE agents SET lease_epoch = lease_epoch + 1 WHERE agent_id = '" +
                         std::string(kAgent) + "'"));
  st = store_->AppendJournal(kAgent, Entries(4, 1, now.epoch, next[0].sha256), now);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_EQ(st.message().rfind("lease lost", 0), 0u) << st.message();
  EXPECT_EQ(store_->GetJournalStats(kAgent)->last_sequence, 3);
}

// The same for the high-water mark: entries another connection appended and then compacted
// away (so no row is left to collide with) still raise it for this connection.
TEST_F(SqliteJournalTest, AnotherConnectionsAppendsAndCompactionAreSeenByTheNext) {
  auto first = Entries(1, 2, lease_.epoch);
  ASSERT_TRUE(store_->AppendJournal(kAgent, first, lease_).ok());
  auto other = SqliteStore::Open(dir_.File("j.db"));
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto theirs = Entries(3, 2, lease_.epoch, first[1].sha256);
  ASSERT_TRUE((*other)->AppendJournal(kAgent, theirs, lease_).ok());
  auto sealed = Seal(testing::MakeCheckpoint(kAgent, 1));
  ASSERT_TRUE(sealed.ok());
  PutOptions opts;
  opts.lease = lease_;
  opts.journal_compact_through = 4;
  ASSERT_TRUE((*other)->Put(*sealed, opts).ok());
  ASSERT_EQ(store_->GetJournalStats(kAgent)->entries, 0);
  EXPECT_EQ(
      store_->AppendJournal(kAgent, Entries(3, 1, lease_.epoch, first[1].sha256), lease_).code(),
      StatusCode::kAlreadyExists);
  EXPECT_TRUE(
      store_->AppendJournal(kAgent, Entries(5, 1, lease_.epoch, theirs[1].sha256), lease_).ok());
  EXPECT_EQ(store_->GetJournalStats(kAgent)->last_sequence, 5);
}

TEST_F(SqliteJournalTest, ASequenceIsNeverReusedEvenAfterCompaction) {
  ASSERT_TRUE(store_->AppendJournal(kAgent, Entries(1, 3, lease_.epoch), lease_).ok());
  EXPECT_EQ(store_->AppendJournal(kAgent, Entries(3, 1, lease_.epoch), lease_).code(),
            StatusCode::kAlreadyExists);
  // A checkpoint put compacts entries up to 3 in its transaction.
  auto sealed = Seal(testing::MakeCheckpoint(kAgent, 1));
  ASSERT_TRUE(sealed.ok());
  PutOptions opts;
  opts.lease = lease_;
  opts.journal_compact_through = 3;
  auto put = store_->Put(*sealed, opts);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(put->journal_compacted, 3);
  EXPECT_EQ(store_->GetJournalStats(kAgent)->entries, 0);
  EXPECT_EQ(store_->GetJournalStats(kAgent)->last_sequence, 3);
  EXPECT_EQ(store_->AppendJournal(kAgent, Entries(2, 1, lease_.epoch), lease_).code(),
            StatusCode::kAlreadyExists);
  EXPECT_TRUE(store_->AppendJournal(kAgent, Entries(4, 1, lease_.epoch), lease_).ok());
}

TEST_F(SqliteJournalTest, RejectsEntriesThatAreNotConsecutiveOrNotTheAgents) {
  auto entries = Entries(1, 3, lease_.epoch);
  entries.erase(entries.begin() + 1);
  EXPECT_EQ(store_->AppendJournal(kAgent, entries, lease_).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->AppendJournal("other-agent", Entries(1, 1, 1), std::nullopt).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(store_->ReadJournal(kAgent, 0)->empty());
}

}  // namespace
}  // namespace agentckpt
