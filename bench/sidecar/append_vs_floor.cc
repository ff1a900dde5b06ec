#include "bench/sidecar/append_vs_floor.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "journal/journal_entry.h"
#include "store/sqlite/sqlite_store.h"

namespace agentckpt::bench {
namespace {

using Clock = std::chrono::steady_clock;

// pwrite of 4 KB + fsync, over 64 blocks of one file.
class FsyncProbe {
 public:
  explicit FsyncProbe(const std::string& path)
      : path_(path), fd_(::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600)) {}
  ~FsyncProbe() {
    if (fd_ >= 0) ::close(fd_);
    ::unlink(path_.c_str());
  }
  // Microseconds, or -1 if the write fails.
  double Once() {
    auto start = Clock::now();
    if (fd_ < 0 || ::pwrite(fd_, block_.data(), block_.size(), (n_++ % 64) * 4096) < 0 ||
        ::fsync(fd_) != 0) {
      std::perror("fsync floor");
      return -1;
    }
    return MicrosSince(start);
  }

 private:
  std::string path_;
  int fd_;
  std::string block_ = std::string(4096, 'x');
  off_t n_ = 0;
};

// The bare SQLite append (see the header).
class BareAppender {
 public:
  ~BareAppender() {
    for (sqlite3_stmt* s : {begin_, insert_, commit_}) sqlite3_finalize(s);
    sqlite3_close(db_);
  }
  bool Open(const std::string& path, int entry_size) {
    entry_ = std::string(static_cast<size_t>(entry_size), 'e');
    return sqlite3_open(path.c_str(), &db_) == SQLITE_OK && Exec("PRAGMA journal_mode=WAL") &&
           Exec("PRAGMA synchronous=FULL") &&
           Exec(
               "CREATE TABLE journal (entry_key INTEGER PRIMARY KEY, agent_id TEXT NOT NULL, "
               "sequence INTEGER NOT NULL, size_bytes INTEGER NOT NULL, entry BLOB NOT NULL)") &&
           Prepare("BEGIN IMMEDIATE", &begin_) && Prepare("COMMIT", &commit_) &&
           Prepare(
               "INSERT INTO journal (entry_key, agent_id, sequence, size_bytes, entry) "
               "VALUES (1099511627776 + ?1, 'bench-bare', ?1, ?2, ?3)",
               &insert_);
  }
  double Once() {
    auto start = Clock::now();
    sqlite3_bind_int64(insert_, 1, ++sequence_);
    sqlite3_bind_int64(insert_, 2, static_cast<int64_t>(entry_.size()));
    sqlite3_bind_blob(insert_, 3, entry_.data(), static_cast<int>(entry_.size()), SQLITE_STATIC);
    bool ok = sqlite3_step(begin_) == SQLITE_DONE && sqlite3_step(insert_) == SQLITE_DONE &&
              sqlite3_step(commit_) == SQLITE_DONE;
    for (sqlite3_stmt* s : {begin_, insert_, commit_}) sqlite3_reset(s);
    if (!ok) {
      std::fprintf(stderr, "bare SQLite append: %s\n", sqlite3_errmsg(db_));
      return -1;
    }
    return MicrosSince(start);
  }

 private:
  bool Exec(const char* sql) { return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == 0; }
  bool Prepare(const char* sql, sqlite3_stmt** out) {
    return sqlite3_prepare_v2(db_, sql, -1, out, nullptr) == SQLITE_OK;
  }
  sqlite3* db_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  std::string entry_;
  int64_t sequence_ = 0;
};

// SqliteStore::AppendJournal of one sealed entry, the entry built before the clock starts.
class StoreAppender {
 public:
  StoreAppender(std::unique_ptr<SqliteStore> store, std::string payload)
      : store_(std::move(store)), payload_(std::move(payload)) {}
  JournalEntry Next() {
    JournalEntry e;
    e.agent_id = "bench-append";
    e.sequence = ++sequence_;
    e.epoch = 1;
    e.kind = JournalKind::kContextPatch;
    e.payload = payload_;
    e.timestamp_ms = 1700000000000 + e.sequence;
    e.prev_sha256 = prev_;
    SealJournalEntry(&e);
    prev_ = e.sha256;
    return e;
  }
  double Once() {
    std::vector<JournalEntry> one = {Next()};
    auto start = Clock::now();
    if (Status s = store_->AppendJournal("bench-append", one, std::nullopt); !s.ok()) {
      std::fprintf(stderr, "AppendJournal: %s\n", s.ToString().c_str());
      return -1;
    }
    return MicrosSince(start);
  }

 private:
  std::unique_ptr<SqliteStore> store_;
  std::string payload_;
  int64_t sequence_ = 0;
  std::string prev_ = kJournalGenesisSha256;
};

int64_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

}  // namespace

bool MeasureAppendVsFloor(const std::string& dir, int calls, const std::string& payload,
                          AppendFigures* out) {
  const std::string db = dir + "/append.db";
  SqliteStoreOptions options;
  options.presize_wal = true;  // as the sidecar opens its store
  auto opened = SqliteStore::Open(db, options);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    return false;
  }
  StoreAppender store(std::move(opened).value(), payload);
  {
    StoreAppender sizer(nullptr, payload);
    out->entry_size = static_cast<int>(EncodeJournalEntry(sizer.Next()).size());
  }
  BareAppender bare;
  if (!bare.Open(dir + "/bare.db", out->entry_size)) return false;
  FsyncProbe probe(dir + "/fsync-probe");

  std::mt19937 random(20261126);
  // One round: the three in a shuffled order; samples kept when `keep`.
  auto round = [&](Latencies* floor, Latencies* ours, Latencies* theirs, bool keep) {
    std::array<std::function<double()>, 3> parts = {
        [&] { return probe.Once(); }, [&] { return store.Once(); }, [&] { return bare.Once(); }};
    std::array<Latencies*, 3> into = {floor, ours, theirs};
    std::array<int, 3> order = {0, 1, 2};
    std::shuffle(order.begin(), order.end(), random);
    for (int k : order) {
      double us = parts[k]();
      if (us < 0) return false;
      if (keep) into[k]->Add(us);
    }
    return true;
  };
  for (int i = 0; i < calls + 20; ++i) {
    if (!round(&out->floor_new, &out->store_new, &out->bare_new, i >= 20)) return false;
  }
  // Until neither WAL file has grown for 500 appends in a row (bounded). The store's WAL is at
  // its steady size from the open on; the bare one grows until SQLite first starts it over.
  int64_t size = FileSize(db + "-wal") + FileSize(dir + "/bare.db-wal");
  for (int quiet = 0; quiet < 500 && out->growth_appends < 50000; ++out->growth_appends) {
    if (store.Once() < 0 || bare.Once() < 0) return false;
    int64_t now = FileSize(db + "-wal") + FileSize(dir + "/bare.db-wal");
    quiet = now > size ? 0 : quiet + 1;
    size = now;
  }
  for (int i = 0; i < calls; ++i) {
    if (!round(&out->floor, &out->store, &out->bare, true)) return false;
  }
  return true;
}

void PrintAppendFigures(AppendFigures* f) {
  std::printf(
      "\n[2] store append alone (SqliteStore::AppendJournal, 1 entry of ~1 KB) vs fsync floor, "
      "and a bare SQLite append of the same %d bytes; the three in alternation\n",
      f->entry_size);
  f->floor_new.Print("fsync floor (pwrite 4 KB + fsync)");
  f->store_new.Print("AppendJournal, new store file");  // WAL grown at open
  f->bare_new.Print("bare SQLite append, new file");
  std::printf(
      "(the store opened as the sidecar opens it: its WAL grown to the steady size at open; "
      "the bare file's WAL grows with its appends)\n");
  std::printf("after %d more appends of each, both WAL files at their steady size:\n",
              f->growth_appends);
  f->floor.Print("fsync floor (pwrite 4 KB + fsync)");
  f->store.Print("AppendJournal, WAL at its steady size");
  f->bare.Print("bare SQLite append, steady");
  const double floor = f->floor.Percentile(50);
  std::printf("%-40s %.2fx the fsync floor at p50 (steady; new file %.2fx)\n", "ratio",
              f->store.Percentile(50) / floor,
              f->store_new.Percentile(50) / f->floor_new.Percentile(50));
  std::printf(
      "%-40s %.2fx the fsync floor at p50 (steady; new file %.2fx); the store's append "
      "is %.2fx it\n",
      "ratio, bare SQLite", f->bare.Percentile(50) / floor,
      f->bare_new.Percentile(50) / f->floor_new.Percentile(50),
      f->store.Percentile(50) / f->bare.Percentile(50));
}

}  // namespace agentckpt::bench
