// Damaged checkpoints in the SQLite store: rows changed behind the store's back with a second
// sqlite3 connection, and bytes flipped in the database file itself. Latest-verified must fall
// back to the newest intact checkpoint and report what it skipped; direct reads of a damaged
// one must say kDataLoss.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "store/sqlite/sqlite_store.h"
#include "tests/store/raw_sqlite.h"
#include "tests/store/store_test_util.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

constexpr char kAgent[] = "agent-corrupt";
constexpr int kCount = 5;

std::string Marker(int64_t sequence) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "UNIQUE-MARKER-%04lld-QX", static_cast<long long>(sequence));
  return buf;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class SqliteCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("checkpoints.db");
    Reopen();
    ASSERT_NE(store_, nullptr);
    for (int64_t s = 1; s <= kCount; ++s) {
      Checkpoint cp = MakeCheckpoint(kAgent, s);
      cp.context_summary.draft_content = "Draft " + Marker(s) + " with some words after it";
      sealed_.push_back(SealForTest(cp));
      STORE_ASSERT_OK(store_->Put(sealed_.back(), PutOptions{}));
    }
    raw_ = std::make_unique<RawSqlite>(path_);
  }

  void Reopen() {
    store_.reset();
    auto store = SqliteStore::Open(path_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  const Checkpoint& Doc(int64_t sequence) { return sealed_[sequence - 1].doc; }
  std::string Document(int64_t s) { return raw_->GetColumn(kAgent, s, "document"); }
  void SetDocument(int64_t s, const std::string& bytes) {
    ASSERT_TRUE(raw_->SetColumn(kAgent, s, "document", bytes));
  }
  // Flips one bit of the byte in the middle of the stored document of `s`.
  void FlipDocumentByte(int64_t s) {
    std::string doc = Document(s);
    ASSERT_FALSE(doc.empty());
    doc[doc.size() / 2] ^= 0x01;
    SetDocument(s, doc);
  }

  // Expects latest-verified to return `sequence` after skipping `skipped` (newest first), and
  // every skipped one to read as kDataLoss by sequence and by id.
  void ExpectFallback(int64_t sequence, const std::vector<int64_t>& skipped,
                      bool ids_intact = true) {
    auto latest = store_->GetLatestVerified(kAgent);
    STORE_ASSERT_OK(latest);
    ExpectSameCheckpoint(latest->checkpoint, Doc(sequence));
    ASSERT_EQ(latest->skipped.size(), skipped.size());
    for (size_t i = 0; i < skipped.size(); ++i) {
      const SkippedCheckpoint& got = latest->skipped[i];
      EXPECT_EQ(got.sequence_number, skipped[i]);
      EXPECT_EQ(got.reason.rfind("DATA_LOSS", 0), 0u) << got.reason;
      ExpectDamaged(skipped[i], ids_intact);
    }
  }
  void ExpectDamaged(int64_t s, bool id_intact = true) {
    STORE_EXPECT_CODE(store_->GetBySequence(kAgent, s), kDataLoss);
    if (id_intact) STORE_EXPECT_CODE(store_->GetById(kAgent, Doc(s).checkpoint_id), kDataLoss);
  }
  void ExpectSkippedIds(const std::vector<int64_t>& skipped) {
    auto latest = store_->GetLatestVerified(kAgent);
    STORE_ASSERT_OK(latest);
    ASSERT_EQ(latest->skipped.size(), skipped.size());
    for (size_t i = 0; i < skipped.size(); ++i) {
      EXPECT_EQ(latest->skipped[i].checkpoint_id, Doc(skipped[i]).checkpoint_id);
    }
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<RawSqlite> raw_;
  std::vector<SealedCheckpoint> sealed_;
};

TEST_F(SqliteCorruptionTest, IntactStoreSkipsNothing) {
  ExpectFallback(kCount, {});
  for (int64_t s = 1; s <= kCount; ++s) STORE_EXPECT_OK(store_->GetBySequence(kAgent, s));
}

TEST_F(SqliteCorruptionTest, FlippedByteInTheNewestDocument) {
  FlipDocumentByte(5);
  ExpectFallback(4, {5});
  ExpectSkippedIds({5});
}

TEST_F(SqliteCorruptionTest, TruncatedNewestDocument) {
  std::string doc = Document(5);
  SetDocument(5, doc.substr(0, doc.size() / 2));
  ExpectFallback(4, {5});
  ExpectSkippedIds({5});
}

TEST_F(SqliteCorruptionTest, EmptiedNewestDocument) {
  SetDocument(5, "");
  ExpectFallback(4, {5});
}

TEST_F(SqliteCorruptionTest, ChangedHashColumn) {
  std::string sha = Doc(5).content_sha256;
  sha[10] = sha[10] == '0' ? '1' : '0';
  ASSERT_TRUE(raw_->SetColumn(kAgent, 5, "content_sha256", sha));
  ExpectFallback(4, {5});
  ExpectSkippedIds({5});
}

TEST_F(SqliteCorruptionTest, SwappedDocuments) {
  std::string d4 = Document(4), d5 = Document(5);
  SetDocument(4, d5);
  SetDocument(5, d4);
  ExpectFallback(3, {5, 4});
}

// Documents and hashes moved together: each hash matches its bytes, but the document is not the
// checkpoint its row says it is.
TEST_F(SqliteCorruptionTest, SwappedDocumentsWithTheirHashes) {
  std::string d4 = Document(4), d5 = Document(5);
  SetDocument(4, d5);
  SetDocument(5, d4);
  ASSERT_TRUE(raw_->SetColumn(kAgent, 4, "content_sha256", Doc(5).content_sha256));
  ASSERT_TRUE(raw_->SetColumn(kAgent, 5, "content_sha256", Doc(4).content_sha256));
  ExpectFallback(3, {5, 4});
  ExpectSkippedIds({5, 4});
}

TEST_F(SqliteCorruptionTest, ChangedCheckpointIdColumn) {
  ASSERT_TRUE(raw_->SetColumn(kAgent, 5, "checkpoint_id", TestUuid(0xdead, 5)));
  ExpectFallback(4, {5}, /*ids_intact=*/false);
  STORE_EXPECT_CODE(store_->GetById(kAgent, TestUuid(0xdead, 5)), kDataLoss);
  STORE_EXPECT_CODE(store_->GetById(kAgent, Doc(5).checkpoint_id), kNotFound);
}

TEST_F(SqliteCorruptionTest, DeletedNewestRow) {
  ASSERT_TRUE(raw_->Exec("DELETE FROM checkpoints WHERE sequence = 5"));
  ExpectFallback(4, {});
  STORE_EXPECT_CODE(store_->GetBySequence(kAgent, 5), kNotFound);
  // The sequence stays taken: the agent record still has it.
  STORE_EXPECT_CODE(store_->Put(sealed_[4], PutOptions{}), kAlreadyExists);
}

TEST_F(SqliteCorruptionTest, NewestTwoCorrupted) {
  FlipDocumentByte(5);
  std::string doc = Document(4);
  SetDocument(4, doc.substr(0, 10));
  ExpectFallback(3, {5, 4});
  ExpectSkippedIds({5, 4});
  STORE_EXPECT_OK(store_->GetBySequence(kAgent, 3));
}

TEST_F(SqliteCorruptionTest, EveryRowCorruptedIsNotFoundWithTheCount) {
  for (int64_t s = 1; s <= kCount; ++s) FlipDocumentByte(s);
  auto latest = store_->GetLatestVerified(kAgent);
  STORE_EXPECT_CODE(latest, kNotFound);
  EXPECT_NE(latest.status().message().find(std::to_string(kCount)), std::string::npos)
      << latest.status().ToString();
  for (int64_t s = 1; s <= kCount; ++s) ExpectDamaged(s);
  // Listing does not verify: all rows are still there to inspect.
  auto listed = store_->List(kAgent, 10);
  STORE_ASSERT_OK(listed);
  EXPECT_EQ(listed->size(), static_cast<size_t>(kCount));
}

TEST_F(SqliteCorruptionTest, CorruptionInAnotherAgentDoesNotMatter) {
  SealedCheckpoint other = SealedAt("agent-other", 9);
  STORE_ASSERT_OK(store_->Put(other, PutOptions{}));
  ASSERT_TRUE(raw_->Exec("UPDATE checkpoints SET document = x'00' WHERE agent_id = '" +
                         std::string(kAgent) + "'"));
  auto latest = store_->GetLatestVerified("agent-other");
  STORE_ASSERT_OK(latest);
  ExpectSameCheckpoint(latest->checkpoint, other.doc);
  EXPECT_TRUE(latest->skipped.empty());
}

// The damage is in the database file on disk, below SQLite: a bit flipped in the bytes of the
// newest document, found by its unique marker once the log has been checkpointed into the file.
TEST_F(SqliteCorruptionTest, FlippedBitInTheDatabaseFile) {
  raw_.reset();
  store_.reset();
  {
    RawSqlite raw(path_);
    EXPECT_EQ(raw.QueryInt("PRAGMA wal_checkpoint(TRUNCATE)"), 0);  // 0: not busy
  }
  ASSERT_FALSE(std::filesystem::exists(path_ + "-wal") &&
               std::filesystem::file_size(path_ + "-wal") > 0);
  std::string bytes = ReadAll(path_);
  const std::string marker = Marker(5);
  size_t at = bytes.find(marker);
  ASSERT_NE(at, std::string::npos) << "the newest document is not in the file";
  ASSERT_EQ(bytes.find(marker, at + 1), std::string::npos) << "the marker is not unique";
  {
    std::fstream file(path_, std::ios::binary | std::ios::in | std::ios::out);
    file.seekp(static_cast<std::streamoff>(at + marker.size() / 2));
    char flipped = static_cast<char>(bytes[at + marker.size() / 2] ^ 0x01);
    file.write(&flipped, 1);
    ASSERT_TRUE(file.good());
  }
  Reopen();
  ASSERT_NE(store_, nullptr);
  // SQLite's own structure is intact, so only the checkpoint hash can notice.
  STORE_EXPECT_OK(store_->CheckIntegrity());
  ExpectFallback(4, {5});
  ExpectSkippedIds({5});
}

// A damaged page header is SQLite-level corruption: the integrity check reports it.
TEST_F(SqliteCorruptionTest, IntegrityCheckReportsADamagedPage) {
  raw_.reset();
  store_.reset();
  {
    RawSqlite raw(path_);
    EXPECT_EQ(raw.QueryInt("PRAGMA wal_checkpoint(TRUNCATE)"), 0);
  }
  size_t page_size = 0;
  {
    RawSqlite raw(path_);
    page_size = static_cast<size_t>(raw.QueryInt("PRAGMA page_size"));
  }
  ASSERT_GE(page_size, 512u);
  std::string bytes = ReadAll(path_);
  size_t at = bytes.find(Marker(3));
  ASSERT_NE(at, std::string::npos);
  size_t page_start = at / page_size * page_size;
  ASSERT_GT(page_start, 0u);
  {
    // Byte 0 of a b-tree page is its type (2, 5, 10 or 13); 0xff is none of them.
    std::fstream file(path_, std::ios::binary | std::ios::in | std::ios::out);
    file.seekp(static_cast<std::streamoff>(page_start));
    const char bad = static_cast<char>(0xff);
    file.write(&bad, 1);
    ASSERT_TRUE(file.good());
  }
  auto store = SqliteStore::Open(path_);
  if (!store.ok()) {
    STORE_EXPECT_CODE(store, kDataLoss);
    return;
  }
  STORE_EXPECT_CODE((*store)->CheckIntegrity(), kDataLoss);
}

}  // namespace
}  // namespace agentckpt::testing
