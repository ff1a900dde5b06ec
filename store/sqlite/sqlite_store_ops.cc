// SqliteStore's operations (opening and migrations are in sqlite_store.cc).
#include <sqlite3.h>

#include <limits>

#include "common/ids.h"
#include "common/status_macros.h"
#include "store/backend_rules.h"
#include "store/sqlite/sqlite_store.h"

namespace agentckpt {
namespace {

class ScopedReset {
 public:
  explicit ScopedReset(sqlite3_stmt* s) : s_(s) {}
  ~ScopedReset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }

 private:
  sqlite3_stmt* s_;
};

void BindText(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
}

std::string ColumnText(sqlite3_stmt* s, int i) {
  const unsigned char* p = sqlite3_column_text(s, i);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<size_t>(sqlite3_column_bytes(s, i)))
           : std::string();
}

std::string_view ColumnBlob(sqlite3_stmt* s, int i) {
  const void* p = sqlite3_column_blob(s, i);
  return p ? std::string_view(static_cast<const char*>(p),
                              static_cast<size_t>(sqlite3_column_bytes(s, i)))
           : std::string_view();
}

}  // namespace

StatusOr<PutResult> SqliteStore::Put(const SealedCheckpoint& sealed, const PutOptions& opts) {
  const Checkpoint& cp = sealed.doc;
  RETURN_IF_ERROR(CheckPutArguments(sealed, opts));
  std::lock_guard<std::mutex> lock(mu_);
  return InTransactionLocked([&]() -> StatusOr<PutResult> {
    {
      ScopedReset r(last_seq_);
      BindText(last_seq_, 1, cp.agent_id);
      int rc = sqlite3_step(last_seq_);
      if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Error("cannot read last sequence", rc);
      if (opts.lease.has_value()) {  // before the sequence: a fenced writer learns why
        std::string holder = rc == SQLITE_ROW ? ColumnText(last_seq_, 1) : std::string();
        int64_t epoch = rc == SQLITE_ROW ? sqlite3_column_int64(last_seq_, 2) : 0;
        if (holder != opts.lease->holder || epoch != opts.lease->epoch) {
          return FailedPreconditionError(LeaseLostMessage(*opts.lease, holder, epoch));
        }
      }
      if (rc == SQLITE_ROW && sqlite3_column_int64(last_seq_, 0) >= cp.sequence_number) {
        return AlreadyExistsError("sequence " + std::to_string(cp.sequence_number) + " of agent " +
                                  cp.agent_id + " is not above the last written sequence " +
                                  std::to_string(sqlite3_column_int64(last_seq_, 0)) +
                                  ": another writer got there");
      }
    }
    {
      ScopedReset r(insert_);
      std::string trigger(TriggerReasonName(cp.trigger_reason));
      BindText(insert_, 1, cp.agent_id);
      sqlite3_bind_int64(insert_, 2, cp.sequence_number);
      BindText(insert_, 3, cp.checkpoint_id);
      sqlite3_bind_int64(insert_, 4, cp.timestamp_ms);
      BindText(insert_, 5, trigger);
      sqlite3_bind_int64(insert_, 6, cp.size_bytes);
      sqlite3_bind_int64(insert_, 7, cp.expire_at_ms);
      BindText(insert_, 8, cp.content_sha256);
      sqlite3_bind_blob(insert_, 9, sealed.canonical.data(),
                        static_cast<int>(sealed.canonical.size()), SQLITE_STATIC);
      int rc = sqlite3_step(insert_);
      if (rc != SQLITE_DONE) {
        return Error(("cannot insert checkpoint " + cp.checkpoint_id + " at sequence " +
                      std::to_string(cp.sequence_number))
                         .c_str(),
                     rc);
      }
    }
    {
      ScopedReset r(bump_agent_);
      BindText(bump_agent_, 1, cp.agent_id);
      sqlite3_bind_int64(bump_agent_, 2, cp.sequence_number);
      sqlite3_bind_int64(bump_agent_, 3, options_.env->NowUnixMillis());
      int rc = sqlite3_step(bump_agent_);
      if (rc != SQLITE_DONE) return Error("cannot update agent record", rc);
    }
    PutResult result;
    ASSIGN_OR_RETURN(result.pruned, PruneLocked(cp.agent_id, opts.keep));
    if (opts.journal_compact_through > 0) {
      ASSIGN_OR_RETURN(result.journal_compacted,
                       CompactJournalLocked(cp.agent_id, opts.journal_compact_through));
    }
    return result;
  });
}

Status SqliteStore::Step(sqlite3_stmt* stmt, const char* what) {
  int rc = sqlite3_step(stmt);
  sqlite3_reset(stmt);
  return rc == SQLITE_DONE ? OkStatus() : Error(what, rc);
}

StatusOr<int> SqliteStore::PruneLocked(const std::string& agent_id, int keep) {
  ScopedReset r(prune_);
  BindText(prune_, 1, agent_id);
  sqlite3_bind_int(prune_, 2, keep);
  int rc = sqlite3_step(prune_);
  if (rc != SQLITE_DONE) return Error("cannot prune", rc);
  return sqlite3_changes(db_);
}

StatusOr<Checkpoint> SqliteStore::ReadVerifiedLocked(const std::string& agent_id, int64_t sequence,
                                                     std::string* checkpoint_id) {
  ScopedReset r(read_by_seq_);
  BindText(read_by_seq_, 1, agent_id);
  sqlite3_bind_int64(read_by_seq_, 2, sequence);
  int rc = sqlite3_step(read_by_seq_);
  if (rc == SQLITE_DONE) {
    return NotFoundError("no checkpoint " + std::to_string(sequence) + " for agent " + agent_id);
  }
  if (rc != SQLITE_ROW) return Error("cannot read checkpoint", rc);
  *checkpoint_id = ColumnText(read_by_seq_, 0);
  std::string sha = ColumnText(read_by_seq_, 1);
  ASSIGN_OR_RETURN(Checkpoint cp, OpenSealed(ColumnBlob(read_by_seq_, 2), sha));
  if (cp.agent_id != agent_id || cp.sequence_number != sequence ||
      cp.checkpoint_id != *checkpoint_id) {
    return DataLossError("stored document " + cp.checkpoint_id + " (agent " + cp.agent_id +
                         ", sequence " + std::to_string(cp.sequence_number) +
                         ") does not match its row (" + *checkpoint_id + ", sequence " +
                         std::to_string(sequence) + ")");
  }
  return cp;
}

StatusOr<LatestVerified> SqliteStore::GetLatestVerified(const std::string& agent_id) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  std::lock_guard<std::mutex> lock(mu_);
  LatestVerified out;
  int64_t below = std::numeric_limits<int64_t>::max();
  // One index-only query for the next sequence, then the row itself: a damaged row is skipped
  // without losing the way to older ones.
  while (true) {
    int64_t sequence;
    {
      ScopedReset r(next_older_seq_);
      BindText(next_older_seq_, 1, agent_id);
      sqlite3_bind_int64(next_older_seq_, 2, below);
      int rc = sqlite3_step(next_older_seq_);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return Error("cannot list checkpoints", rc);
      sequence = sqlite3_column_int64(next_older_seq_, 0);
    }
    std::string id;
    StatusOr<Checkpoint> cp = ReadVerifiedLocked(agent_id, sequence, &id);
    if (cp.ok()) {
      out.checkpoint = std::move(cp).value();
      return out;
    }
    if (cp.status().code() == StatusCode::kUnavailable) return cp.status();
    out.skipped.push_back({id, sequence, cp.status().ToString()});
    below = sequence;
  }
  std::string msg = "no verified checkpoint for agent " + agent_id;
  if (!out.skipped.empty()) msg += " (" + std::to_string(out.skipped.size()) + " corrupted)";
  return NotFoundError(msg);
}

StatusOr<Checkpoint> SqliteStore::GetBySequence(const std::string& agent_id, int64_t sequence) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  std::lock_guard<std::mutex> lock(mu_);
  std::string id;
  return ReadVerifiedLocked(agent_id, sequence, &id);
}

StatusOr<Checkpoint> SqliteStore::GetById(const std::string& agent_id,
                                          const std::string& checkpoint_id) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  std::lock_guard<std::mutex> lock(mu_);
  int64_t sequence;
  {
    ScopedReset r(seq_by_id_);
    BindText(seq_by_id_, 1, agent_id);
    BindText(seq_by_id_, 2, checkpoint_id);
    int rc = sqlite3_step(seq_by_id_);
    if (rc == SQLITE_DONE) {
      return NotFoundError("no checkpoint " + checkpoint_id + " for agent " + agent_id);
    }
    if (rc != SQLITE_ROW) return Error("cannot look up checkpoint", rc);
    sequence = sqlite3_column_int64(seq_by_id_, 0);
  }
  std::string id;
  return ReadVerifiedLocked(agent_id, sequence, &id);
}

StatusOr<std::vector<CheckpointInfo>> SqliteStore::List(const std::string& agent_id, int limit) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  if (limit < 1) return InvalidArgumentError("limit must be at least 1");
  std::lock_guard<std::mutex> lock(mu_);
  ScopedReset r(list_);
  BindText(list_, 1, agent_id);
  sqlite3_bind_int(list_, 2, limit);
  std::vector<CheckpointInfo> out;
  int rc;
  while ((rc = sqlite3_step(list_)) == SQLITE_ROW) {
    CheckpointInfo info;
    info.checkpoint_id = ColumnText(list_, 0);
    info.agent_id = agent_id;
    info.sequence_number = sqlite3_column_int64(list_, 1);
    info.timestamp_ms = sqlite3_column_int64(list_, 2);
    info.trigger_reason =
        ParseTriggerReason(ColumnText(list_, 3)).value_or(TriggerReason::kPeriodic);
    info.size_bytes = sqlite3_column_int64(list_, 4);
    info.expire_at_ms = sqlite3_column_int64(list_, 5);
    info.content_sha256 = ColumnText(list_, 6);
    out.push_back(std::move(info));
  }
  if (rc != SQLITE_DONE) return Error("cannot list checkpoints", rc);
  return out;
}

StatusOr<int> SqliteStore::Prune(const std::string& agent_id, int keep) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  if (keep < 1) return InvalidArgumentError("keep must be at least 1");
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(files_lost_);
  ASSIGN_OR_RETURN(int pruned, PruneLocked(agent_id, keep));
  RETURN_IF_ERROR(CheckFilesLocked());
  return pruned;
}

StatusOr<int> SqliteStore::DeleteExpired(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(files_lost_);
  ScopedReset r(delete_expired_);
  sqlite3_bind_int64(delete_expired_, 1, now_ms);
  int rc = sqlite3_step(delete_expired_);
  if (rc != SQLITE_DONE) return Error("cannot delete expired checkpoints", rc);
  const int deleted = sqlite3_changes(db_);
  RETURN_IF_ERROR(CheckFilesLocked());
  return deleted;
}

StatusOr<AgentRecord> SqliteStore::GetAgent(const std::string& agent_id) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  std::lock_guard<std::mutex> lock(mu_);
  return GetAgentLocked(agent_id);
}

StatusOr<std::vector<std::string>> SqliteStore::ListAgents() {
  std::lock_guard<std::mutex> lock(mu_);
  sqlite3_stmt* stmt = nullptr;
  int rc =
      sqlite3_prepare_v2(db_, "SELECT agent_id FROM agents ORDER BY agent_id", -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return Error("cannot list agents", rc);
  std::vector<std::string> ids;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) ids.push_back(ColumnText(stmt, 0));
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) return Error("cannot list agents", rc);
  return ids;
}

StatusOr<AgentRecord> SqliteStore::GetAgentLocked(const std::string& agent_id) {
  ScopedReset r(get_agent_);
  BindText(get_agent_, 1, agent_id);
  AgentRecord rec;
  rec.agent_id = agent_id;
  int rc = sqlite3_step(get_agent_);
  if (rc == SQLITE_ROW) {
    rec.status = ColumnText(get_agent_, 0);
    rec.updated_at_ms = sqlite3_column_int64(get_agent_, 1);
    rec.last_sequence = sqlite3_column_int64(get_agent_, 2);
    rec.lease_holder = ColumnText(get_agent_, 3);
    rec.lease_epoch = sqlite3_column_int64(get_agent_, 4);
    rec.lease_expires_at_ms = sqlite3_column_int64(get_agent_, 5);
  } else if (rc != SQLITE_DONE) {
    return Error("cannot read agent record", rc);
  }
  return rec;
}

Status SqliteStore::SetAgentStatus(const std::string& agent_id, const std::string& status,
                                   int64_t now_ms) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(files_lost_);
  ScopedReset r(set_status_);
  BindText(set_status_, 1, agent_id);
  BindText(set_status_, 2, status);
  sqlite3_bind_int64(set_status_, 3, now_ms);
  int rc = sqlite3_step(set_status_);
  if (rc != SQLITE_DONE) return Error("cannot set agent status", rc);
  return CheckFilesLocked();
}

Status SqliteStore::SetLeaseLocked(const std::string& agent_id, const Lease& lease,
                                   int64_t now_ms) {
  ScopedReset r(set_lease_);
  BindText(set_lease_, 1, agent_id);
  sqlite3_bind_int64(set_lease_, 2, now_ms);
  BindText(set_lease_, 3, lease.holder);
  sqlite3_bind_int64(set_lease_, 4, lease.epoch);
  sqlite3_bind_int64(set_lease_, 5, lease.expires_at_ms);
  int rc = sqlite3_step(set_lease_);
  return rc == SQLITE_DONE ? OkStatus() : Error("cannot write the agent lease", rc);
}

Status SqliteStore::Ping() {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(Exec("SELECT 1"));
  return CheckFilesLocked();
}

Status SqliteStore::CheckIntegrity() {
  std::lock_guard<std::mutex> lock(mu_);
  sqlite3_stmt* s = nullptr;
  RETURN_IF_ERROR(Prepare("PRAGMA integrity_check", &s));
  std::string findings;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    std::string line = ColumnText(s, 0);
    if (line != "ok") findings += line + "; ";
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return Error("integrity check failed", rc);
  if (!findings.empty()) return DataLossError("integrity check: " + findings);
  return OkStatus();
}

}  // namespace agentckpt
