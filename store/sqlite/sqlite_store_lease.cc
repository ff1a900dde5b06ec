// SqliteStore's writer lease (see CheckpointStore::AcquireLease).
#include "common/ids.h"
#include "common/status_macros.h"
#include "store/sqlite/sqlite_store.h"

namespace agentckpt {

StatusOr<LeaseChange> SqliteStore::LeaseTransaction(const std::string& agent_id, int64_t now_ms,
                                                    const LeaseDecision& decide) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  std::lock_guard<std::mutex> lock(mu_);
  return InTransactionLocked([&]() -> StatusOr<LeaseChange> {
    ASSIGN_OR_RETURN(AgentRecord rec, GetAgentLocked(agent_id));
    ASSIGN_OR_RETURN(LeaseChange next, decide(rec));
    if (next.write) RETURN_IF_ERROR(SetLeaseLocked(agent_id, next.lease, now_ms));
    return next;
  });
}

StatusOr<Lease> SqliteStore::AcquireLease(const std::string& agent_id, const std::string& holder,
                                          int64_t ttl_ms, int64_t now_ms) {
  return AcquireOrTakeOverLease(agent_id, holder, ttl_ms, now_ms, nullptr);
}

StatusOr<Lease> SqliteStore::AcquireOrTakeOverLease(const std::string& agent_id,
                                                    const std::string& holder, int64_t ttl_ms,
                                                    int64_t now_ms, const HolderIsDead& is_dead) {
  ASSIGN_OR_RETURN(
      auto granted,
      LeaseTransaction(agent_id, now_ms, [&](const AgentRecord& rec) -> StatusOr<LeaseChange> {
        Lease current{rec.lease_holder, rec.lease_epoch, rec.lease_expires_at_ms};
        return DecideAcquire(current, holder, ttl_ms, now_ms, is_dead);
      }));
  return granted.lease;
}

StatusOr<Lease> SqliteStore::RenewLease(const std::string& agent_id, const LeaseToken& lease,
                                        int64_t ttl_ms, int64_t now_ms) {
  if (ttl_ms < 1) return InvalidArgumentError("lease ttl: must be positive");
  ASSIGN_OR_RETURN(
      auto renewed,
      LeaseTransaction(agent_id, now_ms, [&](const AgentRecord& rec) -> StatusOr<LeaseChange> {
        if (rec.lease_holder != lease.holder || rec.lease_epoch != lease.epoch) {
          return FailedPreconditionError(
              LeaseLostMessage(lease, rec.lease_holder, rec.lease_epoch));
        }
        return LeaseChange{true, Lease{lease.holder, lease.epoch, now_ms + ttl_ms}};
      }));
  return renewed.lease;
}

Status SqliteStore::ReleaseLease(const std::string& agent_id, const LeaseToken& lease,
                                 int64_t now_ms) {
  return LeaseTransaction(
             agent_id, now_ms,
             [&](const AgentRecord& rec) -> StatusOr<LeaseChange> {
               if (rec.lease_holder != lease.holder || rec.lease_epoch != lease.epoch) {
                 return LeaseChange{};
               }
               return LeaseChange{true, Lease{"", lease.epoch, 0}};
             })
      .status();
}

}  // namespace agentckpt
