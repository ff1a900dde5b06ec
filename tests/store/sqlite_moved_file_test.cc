// SqliteStore when its files are deleted, moved or replaced while it has them open: every write
// is refused with kDataLoss naming the file, and a fresh open of the path (what the next start
// does) is the independent reference that the refused writes would indeed have been lost.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include "store/sqlite/sqlite_store.h"
#include "tests/store/store_test_util.h"
#include "tests/support/journal_chain.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

constexpr char kAgent[] = "agent-moved";

std::unique_ptr<SqliteStore> OpenOrFail(const std::string& path) {
  auto store = SqliteStore::Open(path);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// Runs `body` in a child process that then dies without closing anything (as under SIGKILL: a
// clean close would fold a deleted -wal back into the file); returns its exit code (body's
// return value), or -1 if it did not exit normally.
int ExitCodeOfChild(const std::function<int()>& body) {
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) _exit(body());
  int wstatus = 0;
  if (waitpid(child, &wstatus, 0) != child || !WIFEXITED(wstatus)) return -1;
  return WEXITSTATUS(wstatus);
}

// In the child: opens the store at `path` and puts sequence 1 (else _exit(10)). The store is
// never closed, as in a process killed with it open.
SqliteStore* OpenAndPutInChild(const std::string& path) {
  auto store = SqliteStore::Open(path);
  if (!store.ok() || !(*store)->Put(SealedAt(kAgent, 1), PutOptions{}).ok()) _exit(10);
  return std::move(store).value().release();
}

void ExpectDataLossNaming(const Status& s, const std::string& file, const std::string& what) {
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  EXPECT_NE(s.message().find("store file " + file + " " + what), std::string::npos) << s.message();
}

TEST(SqliteMovedFileTest, ADeletedStoreRefusesEveryWriteAndAFreshOpenConfirmsTheLoss) {
  TempDir dir;
  const std::string path = dir.File("agent.db");
  auto store = OpenOrFail(path);
  ASSERT_NE(store, nullptr);
  STORE_ASSERT_OK(store->Put(SealedAt(kAgent, 1), PutOptions{}));
  STORE_ASSERT_OK(store->AppendJournal(kAgent, JournalChain(kAgent, 1, 1, 0), std::nullopt));
  STORE_ASSERT_OK(store->Ping());

  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);

  // The first write after the deletion is committed to the deleted file and reported as lost.
  ExpectDataLossNaming(StatusOf(store->Put(SealedAt(kAgent, 2), PutOptions{})), path,
                       "was deleted or moved");
  // Every later write is refused at once, with the same reason.
  ExpectDataLossNaming(store->AppendJournal(kAgent, JournalChain(kAgent, 2, 1, 0), std::nullopt),
                       path, "was deleted or moved");
  ExpectDataLossNaming(StatusOf(store->Put(SealedAt(kAgent, 3), PutOptions{})), path,
                       "was deleted or moved");
  ExpectDataLossNaming(store->SetAgentStatus(kAgent, "stopped", 1), path, "was deleted or moved");
  ExpectDataLossNaming(StatusOf(store->AcquireLease(kAgent, "h", 15000, 1)), path,
                       "was deleted or moved");
  ExpectDataLossNaming(StatusOf(store->Prune(kAgent, 1)), path, "was deleted or moved");
  ExpectDataLossNaming(StatusOf(store->DeleteExpired(1)), path, "was deleted or moved");
  ExpectDataLossNaming(store->Ping(), path, "was deleted or moved");

  // What the next start sees at the path: none of it.
  auto fresh = OpenOrFail(path);
  ASSERT_NE(fresh, nullptr);
  auto listed = fresh->List(kAgent, 10);
  STORE_ASSERT_OK(listed);
  EXPECT_TRUE(listed->empty());
  STORE_EXPECT_OK(fresh->Put(SealedAt(kAgent, 1), PutOptions{}));
}

TEST(SqliteMovedFileTest, ADeletedWriteAheadLogAloneIsNoticed) {
  TempDir dir;
  const std::string path = dir.File("agent.db");
  // A child process writes, loses its -wal, writes again and dies. Its exit code says what the
  // store answered: 0 when the second put was refused as kDataLoss naming the log.
  const int code = ExitCodeOfChild([&] {
    auto store = OpenAndPutInChild(path);
    std::filesystem::remove(path + "-wal");
    auto put = store->Put(SealedAt(kAgent, 2), PutOptions{});
    if (put.ok()) return 11;
    if (put.status().code() != StatusCode::kDataLoss) return 12;
    if (put.status().message().find(path + "-wal was deleted or moved") == std::string::npos) {
      return 13;
    }
    return 0;
  });
  EXPECT_EQ(code, 0);
  // Both puts lived only in the deleted log: the next open has neither.
  auto fresh = OpenOrFail(path);
  ASSERT_NE(fresh, nullptr);
  auto listed = fresh->List(kAgent, 10);
  STORE_ASSERT_OK(listed);
  EXPECT_TRUE(listed->empty());
}

TEST(SqliteMovedFileTest, AStoreReplacedByAnotherFileIsNoticed) {
  TempDir dir;
  const std::string path = dir.File("agent.db");
  const std::string other = dir.File("backup.db");
  {
    auto backup = OpenOrFail(other);
    ASSERT_NE(backup, nullptr);
    STORE_ASSERT_OK(backup->Put(SealedAt(kAgent, 7), PutOptions{}));
  }  // closed: its log is folded into the file and deleted
  ASSERT_FALSE(std::filesystem::exists(other + "-wal"));
  auto store = OpenOrFail(path);
  ASSERT_NE(store, nullptr);
  STORE_ASSERT_OK(store->Put(SealedAt(kAgent, 1), PutOptions{}));
  std::filesystem::rename(other, path);  // an operator restoring a copy over the live file
  ExpectDataLossNaming(StatusOf(store->Put(SealedAt(kAgent, 8), PutOptions{})), path,
                       "was replaced by another file");
  ExpectDataLossNaming(store->Ping(), path, "was replaced by another file");
}

TEST(SqliteMovedFileTest, OtherConnectionsOpeningAndClosingTheFileChangeNothing) {
  TempDir dir;
  const std::string path = dir.File("agent.db");
  auto store = OpenOrFail(path);
  ASSERT_NE(store, nullptr);
  for (int64_t seq = 1; seq <= 20; seq += 2) {
    STORE_ASSERT_OK(store->Put(SealedAt(kAgent, seq), PutOptions{}));
    {
      // A one-shot command beside the sidecar: opens the file, writes, closes.
      auto cli = OpenOrFail(path);
      ASSERT_NE(cli, nullptr);
      STORE_ASSERT_OK(cli->Put(SealedAt(kAgent, seq + 1), PutOptions{}));
    }
    STORE_ASSERT_OK(store->Ping());
  }
  STORE_ASSERT_OK(store->AppendJournal(kAgent, JournalChain(kAgent, 1, 3, 0), std::nullopt));
  auto listed = store->List(kAgent, 100);
  STORE_ASSERT_OK(listed);
  EXPECT_EQ(listed->size(), 20u);
}

TEST(SqliteMovedFileTest, AWriteAheadLogWithoutItsDatabaseIsRefusedAndNothingIsCreated) {
  TempDir dir;
  const std::string path = dir.File("agent.db");
  // A child process writes, its database file is deleted, and it dies without closing the store
  // (SIGKILL): the -wal and -shm are left without their database.
  ASSERT_EQ(ExitCodeOfChild([&] {
              (void)OpenAndPutInChild(path);
              std::filesystem::remove(path);
              return 0;
            }),
            0);
  ASSERT_TRUE(std::filesystem::exists(path + "-wal"));
  const auto wal_size = std::filesystem::file_size(path + "-wal");

  auto refused = SqliteStore::Open(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("store file " + path + " is missing but its " +
                                            "write-ahead log " + path + "-wal is there"),
            std::string::npos)
      << refused.status().message();
  EXPECT_FALSE(std::filesystem::exists(path));                     // nothing created
  EXPECT_EQ(std::filesystem::file_size(path + "-wal"), wal_size);  // nor changed

  // What the message says to do: move the log away, and an empty store opens.
  std::filesystem::rename(path + "-wal", dir.File("agent.db-wal.old"));
  std::filesystem::rename(path + "-shm", dir.File("agent.db-shm.old"));
  auto fresh = OpenOrFail(path);
  ASSERT_NE(fresh, nullptr);
  auto listed = fresh->List(kAgent, 10);
  STORE_ASSERT_OK(listed);
  EXPECT_TRUE(listed->empty());
}

}  // namespace
}  // namespace agentckpt::testing
