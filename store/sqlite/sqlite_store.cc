#include "store/sqlite/sqlite_store.h"

#include <sqlite3.h>
#include <sys/statvfs.h>

#include <filesystem>
#include <limits>
#include <mutex>
#include <system_error>

#include "common/ids.h"
#include "common/status_macros.h"
#include "store/sqlite/sqlite_schema.h"

namespace agentckpt {
namespace {

// Below this much free space an I/O error's message says how much is left (IoErrorDetail).
constexpr unsigned long long kLowDiskBytes = 1 << 20;

// The WAL checkpoint interval in pages (PRAGMA wal_autocheckpoint; SQLite's default is 1000).
constexpr int kWalCheckpointPages = 4000;

// SQLite keeps allocation statistics by default, taking a process-wide mutex on every malloc and
// free; nothing here reads them. Only possible before SQLite initialises (the first open in the
// process): if something opened a database earlier, SQLITE_MISUSE leaves the default in place.
void TurnOffSqliteMemoryStatistics() {
  static std::once_flag once;
  std::call_once(once, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

}  // namespace

// SQLite's text for an I/O error does not say what went wrong, and a full disk often shows up as
// one (growing the -shm index fails with SQLITE_IOERR_SHMSIZE, without an errno). What the
// system said, and how much room the file system has left when that is almost none, do.
std::string SqliteStore::IoErrorDetail(int rc) const {
  const int primary = rc & 0xff;
  if (primary != SQLITE_IOERR && primary != SQLITE_FULL && primary != SQLITE_CANTOPEN) return "";
  std::string detail;
  if (const int sys_errno = sqlite3_system_errno(db_); sys_errno != 0) {
    detail += "; " + std::error_code(sys_errno, std::generic_category()).message();
  }
  std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  if (dir.empty()) dir = ".";
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) == 0) {
    const unsigned long long available =
        static_cast<unsigned long long>(fs.f_bavail) * static_cast<unsigned long long>(fs.f_frsize);
    if (available < kLowDiskBytes) {
      detail += "; the file system holding it has " + std::to_string(available) +
                " bytes available: free space on it";
    }
  }
  return detail;
}

Status SqliteStore::Error(const char* what, int rc) const {
  std::string msg = std::string(what) + ": " + sqlite3_errstr(rc);
  if (db_ != nullptr && rc != SQLITE_OK) {
    msg += " (" + std::string(sqlite3_errmsg(db_)) + IoErrorDetail(rc) + ")";
  }
  msg += " [" + path_ + "]";
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
      return AlreadyExistsError(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return DataLossError(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PROTOCOL:
      return UnavailableError(msg);
    default:
      return InternalError(msg);
  }
}

StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                         SqliteStoreOptions options) {
  if (path.empty()) return InvalidArgumentError("sqlite store: empty path");
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && options.create_if_missing) {
    std::filesystem::create_directories(parent, ec);
    if (ec)
      return UnavailableError("cannot create directory " + parent.string() + ": " + ec.message());
  }
  // A -wal without its database: the database was deleted or moved while a process had it open
  // (and that process died before closing it), or the log belongs to another file. SQLite would
  // create an empty database and replay the log into it, and the log holds only the pages changed
  // since its last checkpoint: a damaged store, or one without its tables that looks empty.
  // Refuse before anything is created.
  if (!std::filesystem::exists(path, ec) && !ec && std::filesystem::exists(path + "-wal", ec) &&
      !ec) {
    return FailedPreconditionError(
        "store file " + path + " is missing but its write-ahead log " + path +
        "-wal is there: the database was deleted or moved while a process had it open, or the "
        "log belongs to another database. Opening would replay that log into a new, empty file "
        "without the pages it does not hold (a damaged or silently empty store), so nothing was "
        "opened or created. Put the database file back, "
        "or move " +
        path + "-wal and " + path + "-shm away to start an empty store");
  }
  TurnOffSqliteMemoryStatistics();
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
              (options.create_if_missing ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (options.env == nullptr) options.env = Env::Default();
  std::unique_ptr<SqliteStore> store(new SqliteStore(db, path, options));
  if (rc != SQLITE_OK) return store->Error("cannot open database", rc);
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  sqlite3_extended_result_codes(db, 1);
  // WAL + synchronous=FULL: a committed transaction is fsynced to the WAL before COMMIT returns.
  // Switching a new file to WAL takes an exclusive lock, and SQLite returns SQLITE_BUSY at once
  // (without its busy handler) when another connection is opening the same new file: retry
  // within the busy timeout (measured on the clock: a loaded machine oversleeps).
  const int64_t wal_deadline_us =
      options.env->NowMonotonicMicros() + int64_t{options.busy_timeout_ms} * 1000;
  while (true) {
    rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if ((rc & 0xff) != SQLITE_BUSY || options.env->NowMonotonicMicros() >= wal_deadline_us) break;
    options.env->SleepForMicros(1000);
  }
  if (rc != SQLITE_OK) return store->Error("cannot switch to WAL", rc);
  RETURN_IF_ERROR(store->Exec("PRAGMA synchronous=FULL"));
  RETURN_IF_ERROR(store->Exec("PRAGMA foreign_keys=ON"));
  // Debian builds SQLite with SECURE_DELETE, which zero-fills every pruned document through the
  // WAL on each put. FAST still clears deleted content on b-tree pages but not on freed overflow
  // pages, and the next put reuses those pages at once: about a quarter less I/O per put.
  RETURN_IF_ERROR(store->Exec("PRAGMA secure_delete=FAST"));
  // Checkpoint the WAL every ~4000 pages (16 MB) rather than SQLite's default 1000: the pages
  // every put touches (index leaves, the agent row, the header) are copied back once per
  // checkpoint, so fewer, larger checkpoints write less in total and stall fewer puts.
  RETURN_IF_ERROR(
      store->Exec(("PRAGMA wal_autocheckpoint=" + std::to_string(kWalCheckpointPages)).c_str()));
  RETURN_IF_ERROR(store->Migrate());
  if (options.presize_wal) store->PresizeWal();
  struct {
    sqlite3_stmt** stmt;
    const char* sql;
  } prepared[] = {
      {&store->begin_, "BEGIN IMMEDIATE"},
      {&store->commit_, "COMMIT"},
      {&store->rollback_, "ROLLBACK"},
      {&store->insert_,
       "INSERT INTO checkpoints (agent_id, sequence, checkpoint_id, timestamp_ms, trigger_reason,"
       " size_bytes, expire_at_ms, content_sha256, document) VALUES (?,?,?,?,?,?,?,?,?)"},
      {&store->last_seq_,
       "SELECT last_sequence, lease_holder, lease_epoch FROM agents WHERE agent_id = ?"},
      {&store->bump_agent_,
       "INSERT INTO agents (agent_id, last_sequence, updated_at_ms) VALUES (?1, ?2, ?3)"
       " ON CONFLICT (agent_id) DO UPDATE SET last_sequence = max(last_sequence, ?2)"},
      {&store->prune_,
       "DELETE FROM checkpoints WHERE agent_id = ?1 AND sequence < (SELECT sequence FROM"
       " checkpoints WHERE agent_id = ?1 ORDER BY sequence DESC LIMIT 1 OFFSET ?2 - 1)"},
      {&store->next_older_seq_,
       "SELECT sequence FROM checkpoints WHERE agent_id = ? AND sequence < ?"
       " ORDER BY sequence DESC LIMIT 1"},
      {&store->read_by_seq_,
       "SELECT checkpoint_id, content_sha256, document FROM checkpoints"
       " WHERE agent_id = ? AND sequence = ?"},
      {&store->seq_by_id_,
       "SELECT sequence FROM checkpoints WHERE agent_id = ? AND checkpoint_id = ?"},
      {&store->list_,
       "SELECT checkpoint_id, sequence, timestamp_ms, trigger_reason, size_bytes, expire_at_ms,"
       " content_sha256 FROM checkpoints WHERE agent_id = ? ORDER BY sequence DESC LIMIT ?"},
      {&store->delete_expired_, "DELETE FROM checkpoints WHERE expire_at_ms <= ?"},
      {&store->get_agent_,
       "SELECT status, updated_at_ms, last_sequence, lease_holder, lease_epoch,"
       " lease_expires_at_ms FROM agents WHERE agent_id = ?"},
      {&store->set_lease_,
       "INSERT INTO agents (agent_id, updated_at_ms, lease_holder, lease_epoch,"
       " lease_expires_at_ms) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (agent_id) DO UPDATE SET"
       " updated_at_ms = ?2, lease_holder = ?3, lease_epoch = ?4, lease_expires_at_ms = ?5"},
      {&store->set_status_,
       "INSERT INTO agents (agent_id, status, updated_at_ms) VALUES (?1, ?2, ?3)"
       " ON CONFLICT (agent_id) DO UPDATE SET status = ?2, updated_at_ms = ?3"},
  };
  for (auto& p : prepared) RETURN_IF_ERROR(store->Prepare(p.sql, p.stmt));
  RETURN_IF_ERROR(store->PrepareJournal());
  // After the migrations the -wal and -shm exist, and stay the same files while this connection
  // is open (SQLite deletes them only when the last connection closes).
  store->files_ = internal::StoreFileIdentity::Record({path, path + "-wal", path + "-shm"});
  return store;
}

SqliteStore::SqliteStore(sqlite3* db, std::string path, SqliteStoreOptions options)
    : db_(db), path_(std::move(path)), options_(options) {}

SqliteStore::~SqliteStore() {
  for (sqlite3_stmt* s :
       {begin_, commit_, rollback_, insert_, last_seq_, bump_agent_, prune_, next_older_seq_,
        read_by_seq_, seq_by_id_, list_, delete_expired_, get_agent_, set_status_, set_lease_}) {
    sqlite3_finalize(s);
  }
  FinalizeJournal();
  sqlite3_close_v2(db_);
}

Status SqliteStore::CheckFilesLocked() {
  RETURN_IF_ERROR(files_lost_);
  Status s = files_.Check();
  if (s.code() == StatusCode::kDataLoss) files_lost_ = s;
  return s;
}

Status SqliteStore::Exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  sqlite3_free(err);
  return rc == SQLITE_OK ? OkStatus() : Error("statement failed", rc);
}

Status SqliteStore::Prepare(const char* sql, sqlite3_stmt** out) {
  int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, out, nullptr);
  return rc == SQLITE_OK ? OkStatus() : Error("cannot prepare statement", rc);
}

Status SqliteStore::Migrate() {
  RETURN_IF_ERROR(
      Exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
           " description TEXT NOT NULL, applied_at_ms INTEGER NOT NULL)"));
  ASSIGN_OR_RETURN(int current, SchemaVersion());
  int count = 0;
  const internal::Migration* migrations = internal::SqliteMigrations(&count);
  int latest = migrations[count - 1].version;
  if (current > latest) {
    return FailedPreconditionError("database " + path_ + " has schema version " +
                                   std::to_string(current) + "; this agentckpt knows up to " +
                                   std::to_string(latest) + " (upgrade agentckpt)");
  }
  for (int i = 0; i < count; ++i) {
    const auto& m = migrations[i];
    if (m.version <= current) continue;
    RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    // Another connection may have applied it while this one waited for the lock.
    StatusOr<int> now = SchemaVersion();
    if (now.ok() && *now >= m.version) {
      RETURN_IF_ERROR(Exec("COMMIT"));
      continue;
    }
    Status s = now.ok() ? Exec(m.sql) : now.status();
    if (s.ok()) {
      std::string record = "INSERT INTO schema_migrations VALUES (" + std::to_string(m.version) +
                           ", '" + m.description + "', " +
                           std::to_string(options_.env->NowUnixMillis()) + ")";
      s = Exec(record.c_str());
    }
    if (s.ok()) s = Exec("COMMIT");
    if (!s.ok()) {
      (void)Exec("ROLLBACK");
      return s.WithContext("migration " + std::to_string(m.version));
    }
  }
  return OkStatus();
}

// SQLite writes its files only through its VFS, and SQLITE_FCNTL_JOURNAL_POINTER hands out the
// WAL's handle. The unix VFS extends a file on a size hint once the file has a chunk size: it
// writes into each new block (or ftruncates and then does), so the blocks end up allocated and
// written. fallocate alone would leave unwritten extents, and the first write into one costs a
// metadata commit at the next fsync, much as extending the file does (measured: 1.66 x the fsync
// floor against 1.10 x for written blocks). The zeros past the last frame are not valid frames,
// so WAL recovery stops before them, as it stops before the stale frames of a reused WAL.
void SqliteStore::PresizeWal() {
  sqlite3_stmt* mode = nullptr;
  const unsigned char* mode_name = nullptr;
  bool wal = Prepare("PRAGMA journal_mode", &mode).ok() && sqlite3_step(mode) == SQLITE_ROW &&
             (mode_name = sqlite3_column_text(mode, 0)) != nullptr &&
             sqlite3_stricmp(reinterpret_cast<const char*>(mode_name), "wal") == 0;
  sqlite3_finalize(mode);
  sqlite3_stmt* page = nullptr;
  int page_size = Prepare("PRAGMA page_size", &page).ok() && sqlite3_step(page) == SQLITE_ROW
                      ? sqlite3_column_int(page, 0)
                      : 0;
  sqlite3_finalize(page);
  if (!wal || page_size <= 0) return;
  // Another connection (another agent's sidecar on the same file, the CLI) may be appending
  // frames past the file's current end: the zeros must not land on them. Holding the write lock
  // (BEGIN IMMEDIATE) keeps every other writer, and every WAL restart or truncation, out. When
  // another connection holds it, the WAL is left to grow as it is written.
  sqlite3_busy_timeout(db_, 0);
  const bool locked = Exec("BEGIN IMMEDIATE").ok();
  sqlite3_busy_timeout(db_, options_.busy_timeout_ms);
  if (!locked) return;
  sqlite3_file* file = nullptr;
  if (sqlite3_file_control(db_, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file) == SQLITE_OK &&
      file != nullptr && file->pMethods != nullptr) {
    // A WAL holds a 32-byte header and frames of a 24-byte header plus a page. A commit that
    // crosses the checkpoint interval completes first, so leave room for a few large ones.
    constexpr int kFramesPastInterval = 128;
    sqlite3_int64 size =
        32 + sqlite3_int64{kWalCheckpointPages + kFramesPastInterval} * (24 + page_size);
    int chunk = 1 << 20;
    if (file->pMethods->xFileControl(file, SQLITE_FCNTL_CHUNK_SIZE, &chunk) == SQLITE_OK) {
      (void)file->pMethods->xFileControl(file, SQLITE_FCNTL_SIZE_HINT, &size);
    }
  }
  (void)Exec("COMMIT");  // nothing was written in it: no frame, no fsync
}

StatusOr<int> SqliteStore::SchemaVersion() {
  sqlite3_stmt* s = nullptr;
  RETURN_IF_ERROR(Prepare("SELECT coalesce(max(version), 0) FROM schema_migrations", &s));
  int rc = sqlite3_step(s);
  int version = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
  sqlite3_finalize(s);
  if (rc != SQLITE_ROW) return Error("cannot read schema version", rc);
  return version;
}

}  // namespace agentckpt
