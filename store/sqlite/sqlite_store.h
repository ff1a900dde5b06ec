// SqliteStore: the embedded, durable CheckpointStore (the default store).
//
// One SQLite file in WAL mode with synchronous=FULL: when Put returns OK the checkpoint is in
// the fsynced write-ahead log and survives a process crash or a power loss. Each Put is one
// IMMEDIATE transaction holding the lease check (when the put carries a lease), the insert,
// the agent's sequence high-water mark and the retention pruning. Statements are prepared once.
// Schema changes go through the schema_migrations table (see docs/checkpoint-format.md, "Embedded
// store").
//
// The files stay where they were opened: after each commit the store checks that the database,
// its -wal and its -shm are still the files at their paths (store_file_identity.h). Once one was
// deleted, moved or replaced, every write and Ping returns kDataLoss naming it (what was
// committed would be lost at the next open), until the store is opened again.
//
// Thread-safety: all methods are safe to call concurrently (one connection behind a mutex).
// Several processes may open the same file (e.g. the CLI next to the sidecar); writers are
// serialised by SQLite's lock with a busy timeout, after which kUnavailable is returned.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/env.h"
#include "common/status_macros.h"
#include "store/backend_rules.h"
#include "store/checkpoint_store.h"
#include "store/sqlite/store_file_identity.h"

struct sqlite3;
struct sqlite3_stmt;

namespace agentckpt {

struct SqliteStoreOptions {
  int busy_timeout_ms = 5000;
  bool create_if_missing = true;
  Env* env = nullptr;  // clock for agent status times; Env::Default() when null
  // Grow the write-ahead log to its steady size (the checkpoint interval of 4,000 pages) when
  // the store opens, so that commits overwrite file blocks already written instead of extending
  // the file. A commit that extends the WAL costs about twice the disk's fsync floor on ext4,
  // one that overwrites about 1.1 times (docs/performance.md, "Journal"). Growing costs one
  // write per 4 KiB block, once, while the WAL is smaller (about 7 ms for 17 MiB). SQLite
  // deletes the WAL when the last connection closes, so a long-running writer (the sidecar)
  // wants this and a one-shot command does not. A failure to grow (a full disk) is not an
  // error: the WAL then grows as it is written, as without this option.
  bool presize_wal = false;
};

class SqliteStore final : public LeaseRecordStore {
 public:
  // Opens (and creates, and migrates) the database at `path`; creates missing parent
  // directories. kUnavailable if the file cannot be opened, kDataLoss if it is not a database
  // or is corrupted, kFailedPrecondition if it was written by a newer agentckpt or if the file
  // is missing while its -wal exists (nothing is created then).
  static StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                     SqliteStoreOptions options = {});
  ~SqliteStore() override;

  // The CheckpointStore contract (checkpoint_store.h). Here every call takes the store's mutex;
  // a write is one SQLite transaction, fsynced before the call returns (WAL, synchronous=FULL).
  StatusOr<PutResult> Put(const SealedCheckpoint& cp, const PutOptions& opts) override;
  StatusOr<LatestVerified> GetLatestVerified(const std::string& agent_id) override;
  StatusOr<Checkpoint> GetById(const std::string& agent_id,
                               const std::string& checkpoint_id) override;
  // Reads of one agent's rows, newest first; Prune and DeleteExpired delete in one transaction.
  StatusOr<Checkpoint> GetBySequence(const std::string& agent_id, int64_t sequence) override;
  StatusOr<std::vector<CheckpointInfo>> List(const std::string& agent_id, int limit) override;
  StatusOr<int> Prune(const std::string& agent_id, int keep) override;
  StatusOr<int> DeleteExpired(int64_t now_ms) override;
  // The agents table: status, last sequence and the writer lease.
  StatusOr<AgentRecord> GetAgent(const std::string& agent_id) override;
  Status SetAgentStatus(const std::string& agent_id, const std::string& status,
                        int64_t now_ms) override;
  // A SELECT 1 on the open connection, and the check that the files are still at their paths.
  Status Ping() override;
  // The agents table's ids, one indexed scan (the primary key).
  StatusOr<std::vector<std::string>> ListAgents() override;
  // The writer lease: LeaseRecordStore's methods over ChangeLease (below).

  bool SupportsJournal() const override { return true; }
  Status AppendJournal(const std::string& agent_id, const std::vector<JournalEntry>& entries,
                       const std::optional<LeaseToken>& lease) override;
  StatusOr<std::vector<JournalEntry>> ReadJournal(const std::string& agent_id,
                                                  int64_t after_sequence) override;
  StatusOr<JournalStats> GetJournalStats(const std::string& agent_id) override;

  // Runs PRAGMA integrity_check. kDataLoss with SQLite's findings if the file is damaged.
  Status CheckIntegrity();
  // The schema version the file is at (the highest applied migration).
  StatusOr<int> SchemaVersion();
  const std::string& path() const { return path_; }

 private:
  class Stmt;
  SqliteStore(sqlite3* db, std::string path, SqliteStoreOptions options);
  Status Migrate();
  // SqliteStoreOptions::presize_wal, under SQLite's write lock. Does nothing unless the file is in
  // WAL mode and the lock is free at once.
  void PresizeWal();
  Status Exec(const char* sql);
  Status Prepare(const char* sql, sqlite3_stmt** out);
  Status Error(const char* what, int rc) const;
  // For an I/O, full-disk or open error: "; " + the system's error and, when the file system has
  // under 1 MiB available, how much; else "".
  std::string IoErrorDetail(int rc) const;
  StatusOr<int> PruneLocked(const std::string& agent_id, int keep);
  StatusOr<AgentRecord> GetAgentLocked(const std::string& agent_id);
  Status SetLeaseLocked(const std::string& agent_id, const Lease& lease, int64_t now_ms);
  // In one IMMEDIATE transaction: reads the agent's record, asks `decide` for the lease to
  // store (write=false: store nothing) and stores it. Returns what `decide` returned. The lease
  // methods (LeaseRecordStore, store/backend_rules.h) run on it.
  StatusOr<LeaseChange> ChangeLease(const std::string& agent_id, int64_t now_ms,
                                    const LeaseDecision& decide) override;
  // Reads and verifies the row at (agent, sequence). kNotFound / kDataLoss.
  StatusOr<Checkpoint> ReadVerifiedLocked(const std::string& agent_id, int64_t sequence,
                                          std::string* checkpoint_id);

  // Journal statements (sqlite/sqlite_journal.cc).
  Status PrepareJournal();
  void FinalizeJournal();
  // Deletes the agent's journal entries at or below `through`; how many. Caller holds mu_.
  StatusOr<int64_t> CompactJournalLocked(const std::string& agent_id, int64_t through);
  sqlite3_stmt* journal_head_ = nullptr;
  sqlite3_stmt* journal_insert_ = nullptr;
  sqlite3_stmt* journal_assign_slot_ = nullptr;
  sqlite3_stmt* journal_read_ = nullptr;
  sqlite3_stmt* journal_stats_ = nullptr;
  sqlite3_stmt* journal_raise_ = nullptr;
  sqlite3_stmt* journal_compact_ = nullptr;
  // What an append reads before it writes (the lease, the high-water mark, the journal slot) as
  // this connection's last successful append left it, with SQLite's data version after that
  // commit. SQLite raises the version on every commit of this connection and whenever it finds
  // that another connection (or process) committed, so an equal version at the next append,
  // read inside its write transaction, means nothing changed and the read can be skipped.
  // Guarded by mu_.
  struct JournalHead {
    bool valid = false;
    std::string agent_id;
    std::string lease_holder;
    int64_t lease_epoch = 0;
    int64_t last_sequence = 0;
    int64_t slot = 0;  // 0: none yet
    unsigned int data_version = 0;
  };
  JournalHead journal_head_cache_;
  // The connection's data version (SQLITE_FCNTL_DATA_VERSION); false if SQLite cannot say.
  bool DataVersionLocked(unsigned int* version);
  // Reads the agent's head with journal_head_. Caller holds mu_, in a write transaction.
  Status ReadJournalHeadLocked(const std::string& agent_id, JournalHead* head);

  // The database, -wal and -shm files as opened, and the first failed check of them (then every
  // write returns it). Guarded by mu_.
  internal::StoreFileIdentity files_;
  Status files_lost_;
  // OK while files_ are still at their paths; latches a kDataLoss into files_lost_. Caller holds
  // mu_.
  Status CheckFilesLocked();

  std::mutex mu_;
  sqlite3* db_;
  std::string path_;
  SqliteStoreOptions options_;
  // Runs a prepared statement that returns no rows (BEGIN, COMMIT, ROLLBACK).
  Status Step(sqlite3_stmt* stmt, const char* what);
  // Runs `body` (returning StatusOr<T>) in one IMMEDIATE transaction: committed when it
  // succeeds, rolled back when it or the commit fails. A commit is reported as failed
  // (kDataLoss) when the files are no longer at their paths after it. Caller holds mu_.
  template <typename Body>
  auto InTransactionLocked(Body body) -> decltype(body()) {
    RETURN_IF_ERROR(files_lost_);
    RETURN_IF_ERROR(Step(begin_, "cannot begin transaction"));
    decltype(body()) result = body();
    if (!result.ok()) {
      (void)Step(rollback_, "cannot roll back");
      return result.status();
    }
    if (Status s = Step(commit_, "cannot commit"); !s.ok()) {
      (void)Step(rollback_, "cannot roll back");
      return s;
    }
    RETURN_IF_ERROR(CheckFilesLocked());
    return result;
  }
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* rollback_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* last_seq_ = nullptr;
  sqlite3_stmt* bump_agent_ = nullptr;
  sqlite3_stmt* prune_ = nullptr;
  sqlite3_stmt* next_older_seq_ = nullptr;
  sqlite3_stmt* read_by_seq_ = nullptr;
  sqlite3_stmt* seq_by_id_ = nullptr;
  sqlite3_stmt* list_ = nullptr;
  sqlite3_stmt* delete_expired_ = nullptr;
  sqlite3_stmt* get_agent_ = nullptr;
  sqlite3_stmt* set_status_ = nullptr;
  sqlite3_stmt* set_lease_ = nullptr;
};

}  // namespace agentckpt
