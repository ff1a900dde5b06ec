// RawSqlite: a plain second sqlite3 connection to a store's file, for tests that inspect or
// damage the file behind the store's back. Errors are reported as test failures.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace agentckpt::testing {

class RawSqlite {
 public:
  explicit RawSqlite(const std::string& path) {
    int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr);
    if (rc != SQLITE_OK) ADD_FAILURE() << "cannot open " << path << ": " << sqlite3_errstr(rc);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RawSqlite() { sqlite3_close_v2(db_); }
  RawSqlite(const RawSqlite&) = delete;
  RawSqlite& operator=(const RawSqlite&) = delete;

  // Runs `sql` (one or more statements); false (and a test failure) on an error.
  bool Exec(const std::string& sql) {
    char* err = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    if (rc != SQLITE_OK) ADD_FAILURE() << sql << ": " << (err ? err : sqlite3_errstr(rc));
    sqlite3_free(err);
    return rc == SQLITE_OK;
  }

  // The first column of the first row of `sql` as text ("" if there is no row).
  std::string QueryText(const std::string& sql) {
    std::string out;
    Query(sql, [&](sqlite3_stmt* s) {
      const void* p = sqlite3_column_blob(s, 0);
      out.assign(p ? static_cast<const char*>(p) : "",
                 static_cast<size_t>(sqlite3_column_bytes(s, 0)));
    });
    return out;
  }
  int64_t QueryInt(const std::string& sql) {
    int64_t out = -1;
    Query(sql, [&](sqlite3_stmt* s) { out = sqlite3_column_int64(s, 0); });
    return out;
  }

  // Sets `column` of the checkpoint row at (agent, sequence) to the bytes `value` (as a BLOB for
  // `document`, as TEXT otherwise).
  bool SetColumn(const std::string& agent, int64_t sequence, const std::string& column,
                 const std::string& value) {
    std::string sql =
        "UPDATE checkpoints SET " + column + " = ? WHERE agent_id = ? AND sequence = ?";
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr);
    if (rc == SQLITE_OK) {
      if (column == "document") {
        sqlite3_bind_blob(s, 1, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
      } else {
        sqlite3_bind_text(s, 1, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
      }
      sqlite3_bind_text(s, 2, agent.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(s, 3, sequence);
      rc = sqlite3_step(s);
    }
    sqlite3_finalize(s);
    bool ok = rc == SQLITE_DONE && sqlite3_changes(db_) == 1;
    if (!ok) ADD_FAILURE() << sql << " (" << sequence << "): " << sqlite3_errmsg(db_);
    return ok;
  }
  std::string GetColumn(const std::string& agent, int64_t sequence, const std::string& column) {
    return QueryText("SELECT " + column + " FROM checkpoints WHERE agent_id = '" + agent +
                     "' AND sequence = " + std::to_string(sequence));
  }

  sqlite3* db() { return db_; }

 private:
  template <typename F>
  void Query(const std::string& sql, F on_first_row) {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr);
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(s);
      if (rc == SQLITE_ROW) on_first_row(s);
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
    sqlite3_finalize(s);
  }

  sqlite3* db_ = nullptr;
};

// Damages the stored document of `checkpoint_id` in the store file `db_path`: its sequenceNumber
// becomes a string (the row keeps its sequence column), so it no longer decodes.
inline void DamageStoredSequence(const std::string& db_path, const std::string& checkpoint_id) {
  RawSqlite db(db_path);
  db.Exec(
      "UPDATE checkpoints SET document = CAST(json_set(CAST(document AS TEXT), "
      "'$.sequenceNumber', 'damaged') AS BLOB) WHERE checkpoint_id = '" +
      checkpoint_id + "'");
}

}  // namespace agentckpt::testing
