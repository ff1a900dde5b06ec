// WalCheckpointer through SqliteStore: the write-ahead log is checkpointed on the store's own
// thread, not inside a commit; the log still starts over when commits come back to back; nothing
// committed is lost or damaged by it.
#include "store/sqlite/wal_checkpointer.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "store/sqlite/sqlite_store.h"
#include "tests/store/store_test_util.h"
#include "tests/store/sync_counting_vfs.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

using testing::SyncCountingVfs;
using testing::TempDir;

constexpr char kAgent[] = "agent-w";
constexpr int kThresholdPages = 16;
constexpr std::uintmax_t kFrameBytes = 4096 + 24;

class WalCheckpointerTest : public ::testing::Test {
 protected:
  std::unique_ptr<SqliteStore> Open(bool background) {
    SqliteStoreOptions options;
    options.wal_checkpoint_pages = kThresholdPages;
    options.background_wal_checkpoints = background;
    auto opened = SqliteStore::Open(path_, options);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }
  // One ~1.3 KB entry per commit (one log frame, more when a leaf splits).
  void AppendOne(SqliteStore* store) {
    auto e = testing::JournalChain(kAgent, ++sequence_, 1, 0, prev_);
    e[0].payload = "{\"contextSummary\":{\"draftContent\":\"" +
                   std::string(1000, static_cast<char>('a' + sequence_ % 26)) + "\"}}";
    SealJournalEntry(&e[0]);
    prev_ = e[0].sha256;
    ASSERT_TRUE(store->AppendJournal(kAgent, e, std::nullopt).ok()) << sequence_;
  }
  std::uintmax_t WalFrames() const {
    return std::filesystem::file_size(path_ + "-wal") / kFrameBytes;
  }
  void ExpectEverythingReadable(SqliteStore* store) {
    auto read = store->ReadJournal(kAgent, 0);
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read->size(), static_cast<size_t>(sequence_));
    for (const JournalEntry& e : *read) EXPECT_TRUE(VerifyJournalEntry(e).ok()) << e.sequence;
    EXPECT_TRUE(store->CheckIntegrity().ok());
  }

  TempDir dir_;
  std::string path_ = dir_.File("w.db");
  int64_t sequence_ = 0;
  std::string prev_ = kJournalGenesisSha256;
};

// At an agent's pace (each update after the checkpoint the last one asked for): no commit writes
// or syncs the database file, the checkpoint thread does, and the log starts over each time.
TEST_F(WalCheckpointerTest, TheLogIsCheckpointedOffTheCommittingThread) {
  SyncCountingVfs vfs;
  auto store = Open(true);
  ASSERT_NE(store, nullptr);
  vfs.Reset();  // this thread commits from here on
  for (int i = 0; i < 300; ++i) {
    AppendOne(store.get());
    store->TEST_WaitForWalCheckpoints();
  }
  EXPECT_GE(store->wal_checkpoints(), 300 / (kThresholdPages + 3));
  EXPECT_EQ(store->failed_wal_checkpoints(), 0);
  EXPECT_EQ(store->inline_wal_checkpoints(), 0);
  EXPECT_EQ(vfs.db_writes_on_reset_thread(), 0) << "a commit copied log pages itself";
  EXPECT_EQ(vfs.db_syncs_on_reset_thread(), 0) << "a commit synced the database file itself";
  EXPECT_GT(vfs.db_syncs(), 0) << "the checkpoint thread never synced the database file";
  EXPECT_LT(WalFrames(), 3u * kThresholdPages) << "the log was not started over";
  ExpectEverythingReadable(store.get());
  store.reset();
  store = Open(true);
  ASSERT_NE(store, nullptr);
  ExpectEverythingReadable(store.get());
}

// The reference: with SQLite's automatic checkpoints the committing thread copies the log's pages
// and syncs the database file itself, which is what the checkpoint thread takes off it.
TEST_F(WalCheckpointerTest, WithoutItACommitCheckpointsTheLogItself) {
  SyncCountingVfs vfs;
  auto store = Open(false);
  ASSERT_NE(store, nullptr);
  vfs.Reset();
  for (int i = 0; i < 300; ++i) AppendOne(store.get());
  EXPECT_GT(vfs.db_writes_on_reset_thread(), 0);
  EXPECT_GT(vfs.db_syncs_on_reset_thread(), 0);
  EXPECT_EQ(store->wal_checkpoints(), 0);
}

// Back to back, each commit begins before the pass its predecessor asked for has finished, so
// only the catch-up starts the log over: 600 commits of a frame or more leave a log of far fewer
// frames (without a restart it would hold them all). Everything survives a reopen.
TEST_F(WalCheckpointerTest, BackToBackCommitsStillStartTheLogOver) {
  auto store = Open(true);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 600; ++i) AppendOne(store.get());
  EXPECT_LT(WalFrames(), 400u) << "the log was never started over";
  EXPECT_GE(store->inline_wal_checkpoints() + store->wal_checkpoints(), 1);
  EXPECT_EQ(store->failed_wal_checkpoints(), 0);
  ExpectEverythingReadable(store.get());
  store.reset();
  store = Open(true);
  ASSERT_NE(store, nullptr);
  ExpectEverythingReadable(store.get());
}

}  // namespace
}  // namespace agentckpt
