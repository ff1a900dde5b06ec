// SqliteStore specifics beyond the CheckpointStore contract: the file, its schema and its
// durability settings.
#include "store/sqlite/sqlite_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "tests/store/raw_sqlite.h"
#include "tests/store/store_test_util.h"
#include "tests/store/sync_counting_vfs.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

std::unique_ptr<SqliteStore> OpenOrFail(const std::string& path) {
  auto store = SqliteStore::Open(path);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

TEST(SqliteStoreTest, OpenCreatesParentDirectoriesAndRecordsTheSchema) {
  TempDir dir;
  const std::string path = dir.File("a/b/c/checkpoints.db");
  auto store = OpenOrFail(path);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
  EXPECT_EQ(store->path(), path);
  auto version = store->SchemaVersion();
  STORE_ASSERT_OK(version);
  // 1: checkpoints and agents, 2: the writer lease, 3: the journal, 4: the journal's rowid
  // layout, 5: the journal keyed by agent slot and sequence
  EXPECT_EQ(*version, 5);

  RawSqlite raw(path);
  EXPECT_EQ(raw.QueryInt("SELECT count(*) FROM schema_migrations"), 5);
  EXPECT_EQ(raw.QueryInt("SELECT max(version) FROM schema_migrations"), 5);
  EXPECT_FALSE(raw.QueryText("SELECT description FROM schema_migrations").empty());
  EXPECT_GT(raw.QueryInt("SELECT applied_at_ms FROM schema_migrations"), 0);
  EXPECT_EQ(raw.QueryInt("SELECT count(*) FROM sqlite_master WHERE name IN "
                         "('checkpoints', 'agents')"),
            2);
}

TEST(SqliteStoreTest, ReopeningKeepsDataAndDoesNotMigrateAgain) {
  TempDir dir;
  const std::string path = dir.File("checkpoints.db");
  SealedCheckpoint sealed = SealForTest(LoadFixtureCheckpoint("checkpoint-max.json"));
  {
    auto store = OpenOrFail(path);
    ASSERT_NE(store, nullptr);
    STORE_ASSERT_OK(store->Put(sealed, PutOptions{}));
    STORE_ASSERT_OK(store->SetAgentStatus(sealed.doc.agent_id, "stopped", 77));
  }
  auto store = OpenOrFail(path);
  ASSERT_NE(store, nullptr);
  auto latest = store->GetLatestVerified(sealed.doc.agent_id);
  STORE_ASSERT_OK(latest);
  ExpectSameCheckpoint(latest->checkpoint, sealed.doc);
  auto agent = store->GetAgent(sealed.doc.agent_id);
  STORE_ASSERT_OK(agent);
  EXPECT_EQ(agent->status, "stopped");
  EXPECT_EQ(agent->last_sequence, sealed.doc.sequence_number);
  RawSqlite raw(path);
  EXPECT_EQ(raw.QueryInt("SELECT count(*) FROM schema_migrations"), 5);
}

TEST(SqliteStoreTest, AFileFromANewerVersionIsRefused) {
  TempDir dir;
  const std::string path = dir.File("checkpoints.db");
  ASSERT_NE(OpenOrFail(path), nullptr);
  {
    RawSqlite raw(path);
    ASSERT_TRUE(raw.Exec("INSERT INTO schema_migrations VALUES (99, 'from the future', 1)"));
  }
  auto store = SqliteStore::Open(path);
  STORE_EXPECT_CODE(store, kFailedPrecondition);
  EXPECT_NE(store.status().message().find("99"), std::string::npos) << store.status().ToString();
  RawSqlite raw(path);  // and the file is left as it was
  EXPECT_EQ(raw.QueryInt("SELECT max(version) FROM schema_migrations"), 99);
}

TEST(SqliteStoreTest, NotADatabaseIsDataLoss) {
  TempDir dir;
  const std::string path = dir.File("checkpoints.db");
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 200; ++i) out << "this is a text file, not an SQLite database\n";
  }
  STORE_EXPECT_CODE(SqliteStore::Open(path), kDataLoss);
}

TEST(SqliteStoreTest, AMissingFileIsNotCreatedWhenAskedNotTo) {
  TempDir dir;
  const std::string path = dir.File("absent.db");
  SqliteStoreOptions options;
  options.create_if_missing = false;
  STORE_EXPECT_CODE(SqliteStore::Open(path, options), kUnavailable);
  EXPECT_FALSE(std::filesystem::exists(path));
  STORE_EXPECT_CODE(SqliteStore::Open(""), kInvalidArgument);
}

TEST(SqliteStoreTest, UsesTheWriteAheadLog) {
  TempDir dir;
  const std::string path = dir.File("checkpoints.db");
  auto store = OpenOrFail(path);
  ASSERT_NE(store, nullptr);
  STORE_ASSERT_OK(store->Put(SealedAt("agent-a", 1), PutOptions{}));
  EXPECT_TRUE(std::filesystem::exists(path + "-wal"));
  RawSqlite raw(path);  // journal_mode=WAL is a property of the file, seen by every connection
  EXPECT_EQ(raw.QueryText("PRAGMA journal_mode"), "wal");
}

// The WAL's size at the checkpoint interval (4,000 frames of a 24-byte header and a 4 KiB page,
// after the 32-byte file header), and the options the sidecar opens its store with.
constexpr uint64_t kSteadyWalBytes = 32 + 4000 * uint64_t{24 + 4096};
SqliteStoreOptions AsTheSidecarOpensIt() {
  SqliteStoreOptions options;
  options.presize_wal = true;
  return options;
}

// Creates a store at `path` with agent-a's checkpoint 1 in it, opened without presize_wal.
void CreateWithOneCheckpoint(const std::string& path) {
  auto store = OpenOrFail(path);
  ASSERT_NE(store, nullptr);
  STORE_ASSERT_OK(store->Put(SealedAt("agent-a", 1), PutOptions{}));
}

// The sidecar opens its store with presize_wal: the WAL starts at its steady size, so commits
// overwrite blocks already written instead of extending the file. What a SIGKILL would leave (the
// files as they are while the store is open) must recover every commit and nothing else: the
// zeros past the last frame are not frames.
TEST(SqliteStoreTest, APresizedWalStartsAtItsSteadySizeAndRecoversEveryCommit) {
  TempDir dir;
  const std::string plain = dir.File("plain.db"), path = dir.File("presized.db");
  CreateWithOneCheckpoint(plain);
  ASSERT_EQ(RawSqlite(plain).QueryInt("PRAGMA page_size"), 4096);
  const uint64_t steady = kSteadyWalBytes;
  auto opened = SqliteStore::Open(path, AsTheSidecarOpensIt());
  STORE_ASSERT_OK(opened);
  SqliteStore& store = **opened;
  const uint64_t grown = std::filesystem::file_size(path + "-wal");
  EXPECT_GE(grown, steady);
  {
    auto unsized = OpenOrFail(plain);  // a store opened without the option grows no WAL
    ASSERT_NE(unsized, nullptr);
    STORE_ASSERT_OK(unsized->Put(SealedAt("agent-a", 2), PutOptions{}));
    EXPECT_LT(std::filesystem::file_size(plain + "-wal"), steady / 8);
  }
  for (int64_t s = 1; s <= 20; ++s)
    STORE_ASSERT_OK(store.Put(SealedAt("agent-a", s), PutOptions{}));
  EXPECT_EQ(std::filesystem::file_size(path + "-wal"), grown);  // overwritten, not extended

  const std::string crashed = dir.File("crashed.db");
  std::filesystem::copy_file(path, crashed);
  std::filesystem::copy_file(path + "-wal", crashed + "-wal");
  auto after = OpenOrFail(crashed);
  ASSERT_NE(after, nullptr);
  STORE_ASSERT_OK(after->CheckIntegrity());
  auto listed = after->List("agent-a", 100);
  STORE_ASSERT_OK(listed);
  ASSERT_EQ(listed->size(), 20u);
  auto latest = after->GetLatestVerified("agent-a");
  STORE_ASSERT_OK(latest);
  EXPECT_EQ(latest->checkpoint.sequence_number, 20);
  STORE_ASSERT_OK(after->Put(SealedAt("agent-a", 21), PutOptions{}));
  EXPECT_EQ(RawSqlite(crashed).QueryInt("SELECT count(*) FROM checkpoints"), 21);
}

// Another connection may be appending frames while a sidecar opens the same file (another
// agent's sidecar, the CLI): the WAL is grown only under SQLite's write lock, so the zeros never
// land on frames being written, and it is left to grow as written while another holds the lock.
TEST(SqliteStoreTest, TheWalIsGrownOnlyUnderTheWriteLock) {
  TempDir dir;
  const std::string path = dir.File("shared.db");
  CreateWithOneCheckpoint(path);
  const uint64_t steady = kSteadyWalBytes;
  const SqliteStoreOptions options = AsTheSidecarOpensIt();
  RawSqlite other(path);
  ASSERT_TRUE(other.Exec("CREATE TABLE other_rows (x BLOB)"));
  ASSERT_TRUE(other.Exec("BEGIN IMMEDIATE"));  // the write lock, held across the open below
  ASSERT_TRUE(other.Exec("INSERT INTO other_rows VALUES (randomblob(20000))"));
  {
    auto opened = SqliteStore::Open(path, options);
    STORE_ASSERT_OK(opened);
    EXPECT_LT(std::filesystem::file_size(path + "-wal"), steady / 8);
    ASSERT_TRUE(other.Exec("COMMIT"));
  }
  auto opened = SqliteStore::Open(path, options);  // the lock is free now
  STORE_ASSERT_OK(opened);
  EXPECT_GE(std::filesystem::file_size(path + "-wal"), steady);
  STORE_ASSERT_OK((*opened)->Put(SealedAt("agent-a", 2), PutOptions{}));
  EXPECT_EQ(other.QueryInt("SELECT length(x) FROM other_rows"), 20000);
  EXPECT_EQ(other.QueryInt("SELECT count(*) FROM checkpoints"), 2);
  STORE_ASSERT_OK((*opened)->CheckIntegrity());
}

// synchronous is a per-connection setting that cannot be read from another connection or
// process, so it is checked by what it does: at synchronous=FULL (or EXTRA) in WAL mode every
// commit fsyncs the log; at NORMAL a commit does not (only checkpoints do).
TEST(SqliteStoreTest, EveryPutIsSyncedToTheLog) {
  TempDir dir;
  SyncCountingVfs vfs;
  {
    auto store = OpenOrFail(dir.File("checkpoints.db"));
    ASSERT_NE(store, nullptr);
    // The first commit into a fresh log also syncs the log header; measure the later ones.
    STORE_ASSERT_OK(store->Put(SealedAt("agent-a", 1), PutOptions{}));
    for (int64_t s = 2; s <= 4; ++s) {
      vfs.Reset();
      STORE_ASSERT_OK(store->Put(SealedAt("agent-a", s), PutOptions{}));
      EXPECT_GE(vfs.wal_syncs(), 1) << "put " << s << " returned before the log was synced";
    }
  }
  // The same probe tells a connection at synchronous=NORMAL apart: no sync per commit.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir.File("control.db").c_str(), &db), SQLITE_OK);
    auto exec = [&](const char* sql) {
      EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    };
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=NORMAL");
    exec("CREATE TABLE t (x BLOB)");
    exec("INSERT INTO t VALUES (randomblob(20000))");
    vfs.Reset();
    exec("INSERT INTO t VALUES (randomblob(20000))");
    EXPECT_EQ(vfs.wal_syncs(), 0);
    sqlite3_close(db);
  }
}

TEST(SqliteStoreTest, TwoConnectionsToOneFileNeverOverwriteEachOther) {
  TempDir dir;
  const std::string path = dir.File("checkpoints.db");
  auto first = OpenOrFail(path);
  auto second = OpenOrFail(path);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  SealedCheckpoint mine = SealedAt("agent-a", 1);
  Checkpoint theirs = MakeCheckpoint("agent-a", 1);
  theirs.checkpoint_id = TestUuid(0xbeef, 1);
  STORE_ASSERT_OK(first->Put(mine, PutOptions{}));
  STORE_EXPECT_CODE(second->Put(SealForTest(theirs), PutOptions{}), kAlreadyExists);
  auto seen = second->GetLatestVerified("agent-a");
  STORE_ASSERT_OK(seen);
  ExpectSameCheckpoint(seen->checkpoint, mine.doc);
  STORE_EXPECT_OK(second->Put(SealedAt("agent-a", 2), PutOptions{}));
  STORE_EXPECT_CODE(first->Put(SealedAt("agent-a", 2), PutOptions{}), kAlreadyExists);
}

// The sidecar and the CLI may open a fresh file at the same moment: both must succeed, and the
// schema must be created once.
TEST(SqliteStoreTest, SimultaneousFirstOpensAllSucceed) {
  for (int round = 0; round < 10; ++round) {
    TempDir dir;
    const std::string path = dir.File("checkpoints.db");
    constexpr int kOpeners = 4;
    Status results[kOpeners];
    std::latch start(kOpeners);
    std::vector<std::thread> openers;
    for (int i = 0; i < kOpeners; ++i) {
      openers.emplace_back([&, i] {
        start.arrive_and_wait();
        auto store = SqliteStore::Open(path);
        results[i] = StatusOf(store);
        if (store.ok())
          results[i] =
              (*store)->Put(SealedAt("agent-" + std::to_string(i), 1), PutOptions{}).status();
      });
    }
    for (auto& t : openers) t.join();
    for (int i = 0; i < kOpeners; ++i) {
      EXPECT_TRUE(results[i].ok())
          << "round " << round << ", opener " << i << ": " << results[i].ToString();
    }
    RawSqlite raw(path);
    EXPECT_EQ(raw.QueryInt("SELECT count(*) FROM schema_migrations"), 5);
    EXPECT_EQ(raw.QueryInt("SELECT count(*) FROM checkpoints"), kOpeners);
  }
}

TEST(SqliteStoreTest, IntegrityCheckPassesOnAHealthyFile) {
  TempDir dir;
  auto store = OpenOrFail(dir.File("checkpoints.db"));
  ASSERT_NE(store, nullptr);
  for (int64_t s = 1; s <= 20; ++s) {
    STORE_ASSERT_OK(store->Put(SealedAt("agent-a", s), PutOptions{5}));
  }
  STORE_EXPECT_OK(store->CheckIntegrity());
  STORE_EXPECT_OK(store->Ping());
}

TEST(SqliteStoreTest, RejectsAnUnsealedCheckpoint) {
  TempDir dir;
  auto store = OpenOrFail(dir.File("checkpoints.db"));
  ASSERT_NE(store, nullptr);
  SealedCheckpoint unsealed{MakeCheckpoint("agent-a", 1), ""};
  STORE_EXPECT_CODE(store->Put(unsealed, PutOptions{}), kInvalidArgument);
  STORE_EXPECT_CODE(store->GetLatestVerified("agent-a"), kNotFound);
}

TEST(SqliteStoreTest, AVersionOneFileMigratesToTheLeaseSchemaKeepingItsData) {
  TempDir dir;
  const std::string path = dir.File("v1.db");
  {
    auto store = OpenOrFail(path);
    ASSERT_NE(store, nullptr);
    STORE_ASSERT_OK(store->Put(SealedAt("agent-a", 1), PutOptions{}));
  }
  {
    // Take the file back to version 1: no journal, the agents table without the lease columns.
    RawSqlite raw(path);
    ASSERT_TRUE(raw.Exec("DROP TABLE journal"));
    ASSERT_TRUE(raw.Exec("DROP INDEX agents_by_journal_slot"));
    ASSERT_TRUE(raw.Exec("ALTER TABLE agents DROP COLUMN journal_slot"));
    ASSERT_TRUE(raw.Exec("DELETE FROM schema_migrations WHERE version IN (4, 5)"));
    ASSERT_TRUE(raw.Exec("ALTER TABLE agents DROP COLUMN journal_last_sequence"));
    ASSERT_TRUE(raw.Exec("DELETE FROM schema_migrations WHERE version = 3"));
    ASSERT_TRUE(raw.Exec("ALTER TABLE agents DROP COLUMN lease_holder"));
    ASSERT_TRUE(raw.Exec("ALTER TABLE agents DROP COLUMN lease_epoch"));
    ASSERT_TRUE(raw.Exec("ALTER TABLE agents DROP COLUMN lease_expires_at_ms"));
    ASSERT_TRUE(raw.Exec("DELETE FROM schema_migrations WHERE version = 2"));
  }
  auto store = OpenOrFail(path);
  ASSERT_NE(store, nullptr);
  auto version = store->SchemaVersion();
  STORE_ASSERT_OK(version);
  EXPECT_EQ(*version, 5);
  auto agent = store->GetAgent("agent-a");
  STORE_ASSERT_OK(agent);
  EXPECT_EQ(agent->last_sequence, 1);
  EXPECT_EQ(agent->lease_epoch, 0);
  auto lease = store->AcquireLease("agent-a", "pod-1/aa", 1000, 5000);
  STORE_ASSERT_OK(lease);
  EXPECT_EQ(lease->epoch, 1);
}

TEST(SqliteStoreTest, AVersionThreeJournalMigratesToTheCurrentLayoutKeepingItsEntries) {
  TempDir dir;
  const std::string path = dir.File("v3.db");
  std::vector<JournalEntry> entries;
  LeaseToken lease;
  {
    auto store = OpenOrFail(path);
    ASSERT_NE(store, nullptr);
    auto held = store->AcquireLease("agent-a", "pod-1/aa", 60000, 1000);
    STORE_ASSERT_OK(held);
    lease = LeaseToken{held->holder, held->epoch};
    entries = JournalChain("agent-a", 1, 5, lease.epoch);
    entries[2].payload =
        "{\"contextSummary\":{\"draftContent\":\"" + std::string(3000, 'd') + "\"}}";
    SealJournalEntry(&entries[2]);
    for (size_t i = 3; i < entries.size(); ++i) {
      entries[i].prev_sha256 = entries[i - 1].sha256;
      SealJournalEntry(&entries[i]);
    }
    STORE_ASSERT_OK(store->AppendJournal("agent-a", entries, lease));
  }
  {
    // Take the journal back to its version 3 layout (a WITHOUT ROWID table), rows and all.
    RawSqlite raw(path);
    ASSERT_TRUE(raw.Exec(
        "CREATE TABLE journal_v3 (agent_id TEXT NOT NULL, sequence INTEGER NOT NULL,"
        " size_bytes INTEGER NOT NULL, entry BLOB NOT NULL, PRIMARY KEY (agent_id, sequence))"
        " WITHOUT ROWID;"
        "INSERT INTO journal_v3 SELECT agent_id, sequence, size_bytes, entry FROM journal;"
        "DROP TABLE journal; ALTER TABLE journal_v3 RENAME TO journal;"
        "DROP INDEX agents_by_journal_slot; ALTER TABLE agents DROP COLUMN journal_slot;"
        "DELETE FROM schema_migrations WHERE version IN (4, 5)"));
    ASSERT_NE(
        raw.QueryText("SELECT sql FROM sqlite_master WHERE name = 'journal'").find("WITHOUT ROWID"),
        std::string::npos);
  }
  auto store = OpenOrFail(path);
  ASSERT_NE(store, nullptr);
  auto version = store->SchemaVersion();
  STORE_ASSERT_OK(version);
  EXPECT_EQ(*version, 5);
  auto read = store->ReadJournal("agent-a", 0);
  STORE_ASSERT_OK(read);
  ASSERT_EQ(read->size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ((*read)[i], entries[i]) << i;
  // The chain goes on where it was; a sequence already taken is still refused.
  STORE_EXPECT_CODE(
      store->AppendJournal("agent-a", JournalChain("agent-a", 5, 1, lease.epoch, entries[3].sha256),
                           lease),
      kAlreadyExists);
  STORE_EXPECT_OK(store->AppendJournal(
      "agent-a", JournalChain("agent-a", 6, 1, lease.epoch, entries.back().sha256), lease));
  STORE_EXPECT_OK(store->CheckIntegrity());
  RawSqlite raw(path);
  const std::string sql = raw.QueryText("SELECT sql FROM sqlite_master WHERE name = 'journal'");
  EXPECT_EQ(sql.find("WITHOUT ROWID"), std::string::npos) << sql;
  EXPECT_NE(sql.find("entry_key   INTEGER PRIMARY KEY"), std::string::npos) << sql;
  EXPECT_EQ(sql.find("UNIQUE"), std::string::npos) << sql;
  EXPECT_EQ(raw.QueryInt("SELECT count(*) FROM journal"), 6);
}

// Version 4 (a rowid table with an (agent_id, sequence) index) to version 5 (rows keyed by the
// agent's slot and the sequence): two agents' interleaved entries, one of the agents without a
// record in the agents table, all kept, each agent's journal read, appended to and compacted on
// its own afterwards.
TEST(SqliteStoreTest, AVersionFourJournalMigratesToSlotKeysKeepingEveryAgentsEntries) {
  TempDir dir;
  const std::string path = dir.File("v4.db");
  std::vector<JournalEntry> a = JournalChain("agent-a", 1, 4, 0);
  std::vector<JournalEntry> b = JournalChain("agent-b", 1, 3, 0);
  {
    auto store = OpenOrFail(path);
    ASSERT_NE(store, nullptr);
    for (size_t i = 0; i < a.size(); ++i) {  // interleaved: a1 b1 a2 b2 ...
      STORE_ASSERT_OK(store->AppendJournal("agent-a", {a[i]}, std::nullopt));
      if (i < b.size()) STORE_ASSERT_OK(store->AppendJournal("agent-b", {b[i]}, std::nullopt));
    }
  }
  {
    RawSqlite raw(path);
    ASSERT_TRUE(
        raw.Exec("CREATE TABLE journal_v4 (row_id INTEGER PRIMARY KEY, agent_id TEXT NOT NULL,"
                 " sequence INTEGER NOT NULL, size_bytes INTEGER NOT NULL, entry BLOB NOT NULL,"
                 " UNIQUE (agent_id, sequence));"
                 "INSERT INTO journal_v4 (agent_id, sequence, size_bytes, entry)"
                 " SELECT agent_id, sequence, size_bytes, entry FROM journal ORDER BY entry_key;"
                 "DROP TABLE journal; ALTER TABLE journal_v4 RENAME TO journal;"
                 "DROP INDEX agents_by_journal_slot; ALTER TABLE agents DROP COLUMN journal_slot;"
                 "DELETE FROM agents WHERE agent_id = 'agent-b';"
                 "DELETE FROM schema_migrations WHERE version = 5"));
    ASSERT_EQ(raw.QueryInt("SELECT count(*) FROM journal"), 7);
  }
  auto store = OpenOrFail(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->SchemaVersion(), 5);
  for (const auto& [agent, chain] : {std::pair{"agent-a", &a}, std::pair{"agent-b", &b}}) {
    auto read = store->ReadJournal(agent, 0);
    STORE_ASSERT_OK(read);
    ASSERT_EQ(read->size(), chain->size()) << agent;
    for (size_t i = 0; i < chain->size(); ++i) EXPECT_EQ((*read)[i], (*chain)[i]) << agent << i;
    auto stats = store->GetJournalStats(agent);
    STORE_ASSERT_OK(stats);
    EXPECT_EQ(stats->entries, static_cast<int64_t>(chain->size())) << agent;
    EXPECT_EQ(stats->last_sequence, chain->back().sequence) << agent;
  }
  STORE_EXPECT_CODE(store->AppendJournal("agent-b", JournalChain("agent-b", 3, 1, 0), std::nullopt),
                    kAlreadyExists);
  STORE_EXPECT_OK(store->AppendJournal("agent-b", JournalChain("agent-b", 4, 1, 0, b.back().sha256),
                                       std::nullopt));
  // A checkpoint of agent-a that includes its sequence 3 compacts a's entries 1..3 only.
  SealedCheckpoint cp = SealedAt("agent-a", 1);
  PutOptions opts;
  opts.journal_compact_through = 3;
  STORE_ASSERT_OK(store->Put(cp, opts));
  EXPECT_EQ(store->ReadJournal("agent-a", 0)->size(), 1u);
  EXPECT_EQ(store->ReadJournal("agent-b", 0)->size(), 4u);
  EXPECT_EQ(store->ReadJournal("agent-b", 2)->front().sequence, 3);
  STORE_EXPECT_OK(store->CheckIntegrity());
  RawSqlite raw(path);
  EXPECT_EQ(raw.QueryInt("SELECT count(DISTINCT journal_slot) FROM agents"), 2);
  EXPECT_EQ(raw.QueryInt("SELECT count(*) FROM journal j JOIN agents a USING (agent_id)"
                         " WHERE j.entry_key = a.journal_slot * 1099511627776 + j.sequence"),
            5);
}

// The key keeps 40 bits for the sequence: a sequence outside 1..2^40-1 is refused, never wrapped
// into another agent's range.
TEST(SqliteStoreTest, AJournalSequenceOutsideTheKeysRangeIsRefused) {
  TempDir dir;
  auto store = OpenOrFail(dir.File("range.db"));
  ASSERT_NE(store, nullptr);
  STORE_EXPECT_CODE(store->AppendJournal("agent-a", JournalChain("agent-a", 0, 1, 0), std::nullopt),
                    kInvalidArgument);
  const int64_t too_far = int64_t{1} << 40;
  STORE_EXPECT_CODE(
      store->AppendJournal("agent-a", JournalChain("agent-a", too_far - 1, 2, 0), std::nullopt),
      kInvalidArgument);
  STORE_EXPECT_OK(
      store->AppendJournal("agent-a", JournalChain("agent-a", too_far - 1, 1, 0), std::nullopt));
  STORE_EXPECT_OK(store->AppendJournal("agent-b", JournalChain("agent-b", 1, 1, 0), std::nullopt));
  EXPECT_EQ(store->ReadJournal("agent-a", 0)->size(), 1u);
  EXPECT_EQ(store->ReadJournal("agent-b", 0)->size(), 1u);
  EXPECT_EQ(store->ReadJournal("agent-a", too_far + 5)->size(), 0u);
  EXPECT_EQ(store->ReadJournal("agent-b", -5)->size(), 1u);
}

}  // namespace
}  // namespace agentckpt::testing
