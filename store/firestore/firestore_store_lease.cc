// FirestoreStore's writer lease (see CheckpointStore::AcquireLease): the lease fields of
// agents/{agentId}, changed by one :commit under the record's updateTime precondition. A change
// of epoch also writes the journal's fence document in that commit (firestore_store.h).
#include <optional>
#include <vector>

#include "common/ids.h"
#include "common/status_macros.h"
#include "common/time_format.h"
#include "store/backend_rules.h"
#include "store/firestore/firestore_store.h"

namespace agentckpt {
namespace {

using nlohmann::json;

constexpr int kLeaseConflictRounds = 3;

bool IsConflict(const Status& s) {
  return s.code() == StatusCode::kAlreadyExists || s.code() == StatusCode::kFailedPrecondition;
}

}  // namespace

StatusOr<LeaseChange> FirestoreStore::ChangeLease(const std::string& agent_id, int64_t now_ms,
                                                  const LeaseDecision& decide) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  std::lock_guard<std::mutex> lock(write_mu_);
  Status last_conflict;
  for (int round = 0; round < kLeaseConflictRounds; ++round) {
    auto it = agent_cache_.find(agent_id);
    const bool fresh_read = it == agent_cache_.end();
    if (fresh_read) {
      ASSIGN_OR_RETURN(AgentState fresh, ReadAgent(agent_id));
      it = agent_cache_.emplace(agent_id, std::move(fresh)).first;
    }
    const AgentState agent = it->second;
    StatusOr<LeaseChange> next = decide(LeaseOf(agent));
    if (!fresh_read && (!next.ok() || !next->write)) {
      // The verdict came from the cache, which may be behind: judge on the stored record.
      agent_cache_.erase(agent_id);
      ASSIGN_OR_RETURN(AgentState fresh, ReadAgent(agent_id));
      agent_cache_[agent_id] = fresh;
      next = decide(LeaseOf(fresh));
    }
    if (!next.ok() || !next->write) return next;
    const AgentState& base = agent_cache_[agent_id];
    const Lease lease = next->lease;
    std::vector<int64_t> base_fences = base.journal_fences;
    json write = {{"update",
                   {{"name", AgentName(agent_id)},
                    {"fields",
                     {{"agentId", {{"stringValue", agent_id}}},
                      {"leaseHolder", {{"stringValue", lease.holder}}},
                      {"leaseEpoch", {{"integerValue", std::to_string(lease.epoch)}}},
                      {"leaseExpiresAtMs", {{"integerValue", std::to_string(lease.expires_at_ms)}}},
                      {"updatedAt", {{"timestampValue", FormatRfc3339Millis(now_ms)}}}}}}},
                  {"updateMask",
                   {{"fieldPaths",
                     {"agentId", "leaseHolder", "leaseEpoch", "leaseExpiresAtMs", "updatedAt"}}}}};
    write["currentDocument"] = AgentPrecondition(base);
    json writes = json::array();
    std::optional<JournalHead> fenced;
    if (lease.epoch != base.lease_epoch && base.lease_epoch > 0) {
      // A new epoch fences the journal in the same commit (firestore_store.h); the first one
      // has no earlier writer to fence.
      std::vector<int64_t> fences;
      ASSIGN_OR_RETURN(fenced,
                       AddFence(agent_id, base, lease.holder, lease.epoch, &writes, &fences));
      write["update"]["fields"]["journalFences"] = {{"arrayValue", {{"values", json::array()}}}};
      for (int64_t f : fences) {
        write["update"]["fields"]["journalFences"]["arrayValue"]["values"].push_back(
            {{"integerValue", std::to_string(f)}});
      }
      write["updateMask"]["fieldPaths"].push_back("journalFences");
      base_fences = fences;
    }
    writes.insert(writes.begin(), write);
    CallInfo info;
    json body = {{"writes", writes}};
    StatusOr<json> reply =
        http_->Call("POST", ApiPath(DocumentsPath() + ":commit"), &body, &info, Hedge::kYes);
    if (reply.ok()) {
      AgentState updated = base;
      updated.exists = true;
      updated.lease_holder = lease.holder;
      updated.lease_epoch = lease.epoch;
      updated.lease_expires_at_ms = lease.expires_at_ms;
      updated.journal_fences = base_fences;
      updated.update_time = WrittenUpdateTime(*reply, 0);
      {
        std::lock_guard<std::mutex> journal_lock(journal_mu_);
        if (fenced.has_value()) {
          fenced->fence_update_time = WrittenUpdateTime(*reply, 1);
          journal_cache_[agent_id] = *fenced;
        }
      }
      if (updated.update_time.empty()) {
        agent_cache_.erase(agent_id);
      } else {
        agent_cache_[agent_id] = updated;
      }
      return next;
    }
    agent_cache_.erase(agent_id);
    if (fenced.has_value()) {
      std::lock_guard<std::mutex> journal_lock(journal_mu_);
      journal_cache_.erase(agent_id);  // the fence may or may not be stored: read it afresh
    }
    if (!IsConflict(reply.status())) return reply.status();
    if (info.maybe_applied_earlier) {
      // An earlier attempt may have committed: the conflict could be our own write.
      ASSIGN_OR_RETURN(AgentState now, ReadAgent(agent_id));
      if (now.lease_holder == lease.holder && now.lease_epoch == lease.epoch &&
          now.lease_expires_at_ms == lease.expires_at_ms) {
        agent_cache_[agent_id] = now;
        return next;
      }
    }
    last_conflict = reply.status();
  }
  return UnavailableError("lease of agent " + agent_id +
                          ": the agent record kept changing: " + last_conflict.message());
}

}  // namespace agentckpt
