#include "bench/sidecar/bare_sqlite_append.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>

namespace agentckpt::bench {
namespace {

bool Check(sqlite3* db, int rc, const char* what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return true;
  std::fprintf(stderr, "bare SQLite append: %s: %s\n", what, sqlite3_errmsg(db));
  return false;
}

}  // namespace

bool BareSqliteAppend(const std::string& path, int warmup, int count, int entry_size,
                      Latencies* out) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    std::fprintf(stderr, "bare SQLite append: cannot open %s\n", path.c_str());
    sqlite3_close(db);
    return false;
  }
  sqlite3_stmt* begin = nullptr;
  sqlite3_stmt* insert = nullptr;
  sqlite3_stmt* commit = nullptr;
  bool ok =
      Check(db, sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr), "WAL") &&
      Check(db, sqlite3_exec(db, "PRAGMA synchronous=FULL", nullptr, nullptr, nullptr), "FULL") &&
      Check(db,
            sqlite3_exec(db,
                         "CREATE TABLE journal (row_id INTEGER PRIMARY KEY, agent_id TEXT NOT "
                         "NULL, sequence INTEGER NOT NULL, size_bytes INTEGER NOT NULL, entry "
                         "BLOB NOT NULL, UNIQUE (agent_id, sequence))",
                         nullptr, nullptr, nullptr),
            "create") &&
      Check(db, sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, nullptr), "prepare") &&
      Check(db, sqlite3_prepare_v2(db, "COMMIT", -1, &commit, nullptr), "prepare") &&
      Check(db,
            sqlite3_prepare_v2(db,
                               "INSERT INTO journal (agent_id, sequence, size_bytes, entry) "
                               "VALUES ('bench-bare', ?, ?, ?)",
                               -1, &insert, nullptr),
            "prepare");
  const std::string entry(static_cast<size_t>(entry_size), 'e');
  for (int i = 0; ok && i < warmup + count; ++i) {
    auto start = std::chrono::steady_clock::now();
    ok = Check(db, sqlite3_step(begin), "begin");
    sqlite3_bind_int64(insert, 1, i + 1);
    sqlite3_bind_int64(insert, 2, entry_size);
    sqlite3_bind_blob(insert, 3, entry.data(), entry_size, SQLITE_STATIC);
    ok = ok && Check(db, sqlite3_step(insert), "insert") &&
         Check(db, sqlite3_step(commit), "commit");
    sqlite3_reset(begin);
    sqlite3_reset(insert);
    sqlite3_reset(commit);
    if (ok && i >= warmup) out->Add(MicrosSince(start));
  }
  sqlite3_finalize(begin);
  sqlite3_finalize(insert);
  sqlite3_finalize(commit);
  sqlite3_close(db);
  return ok;
}

}  // namespace agentckpt::bench
