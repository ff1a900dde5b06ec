// FirestoreStore's writer lease (see CheckpointStore::AcquireLease): the lease fields of
// agents/{agentId}, changed by one :commit under the record's updateTime precondition.
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
    CallInfo info;
    json body = {{"writes", json::array({write})}};
    StatusOr<json> reply =
        http_->Call("POST", ApiPath(DocumentsPath() + ":commit"), &body, &info, Hedge::kYes);
    if (reply.ok()) {
      AgentState updated = base;
      updated.exists = true;
      updated.lease_holder = lease.holder;
      updated.lease_epoch = lease.epoch;
      updated.lease_expires_at_ms = lease.expires_at_ms;
      updated.update_time = WrittenUpdateTime(*reply, 0);
      if (updated.update_time.empty()) {
        agent_cache_.erase(agent_id);
      } else {
        agent_cache_[agent_id] = updated;
      }
      return next;
    }
    agent_cache_.erase(agent_id);
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
