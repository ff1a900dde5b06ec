// SqliteStore's writer lease: the one lease change LeaseRecordStore's methods run on (see
// CheckpointStore::AcquireLease and store/backend_rules.h).
#include "common/ids.h"
#include "common/status_macros.h"
#include "store/backend_rules.h"
#include "store/sqlite/sqlite_store.h"

namespace agentckpt {

StatusOr<LeaseChange> SqliteStore::ChangeLease(const std::string& agent_id, int64_t now_ms,
                                               const LeaseDecision& decide) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  std::lock_guard<std::mutex> lock(mu_);
  return InTransactionLocked([&]() -> StatusOr<LeaseChange> {
    ASSIGN_OR_RETURN(AgentRecord rec, GetAgentLocked(agent_id));
    ASSIGN_OR_RETURN(LeaseChange next, decide(LeaseOf(rec)));
    if (next.write) RETURN_IF_ERROR(SetLeaseLocked(agent_id, next.lease, now_ms));
    return next;
  });
}

}  // namespace agentckpt
