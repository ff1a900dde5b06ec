// JetStreamStore: the agent record's status and the writer lease, each changed by compare-and-set
// on the agent record (ChangeRecordLocked).
#include "common/ids.h"
#include "common/status_macros.h"
#include "store/jetstream/jetstream_store.h"

namespace agentckpt {

Status JetStreamStore::SetAgentStatus(const std::string& agent_id, const std::string& status,
                                      int64_t now_ms) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  std::lock_guard<std::mutex> lock(mu_);
  return ChangeRecordLocked(agent_id, true,
                            [&](JsAgentRecord* rec) {
                              rec->agent_id = agent_id;
                              rec->status = status;
                              rec->updated_at_ms = now_ms;
                              return StatusOr<bool>(true);
                            })
      .status();
}

StatusOr<LeaseChange> JetStreamStore::ChangeLease(const std::string& agent_id, int64_t now_ms,
                                                  const LeaseDecision& decide) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  LeaseChange decided;
  Lease before;  // the lease the record held
  {
    std::lock_guard<std::mutex> lock(mu_);
    ASSIGN_OR_RETURN(Record r,
                     ChangeRecordLocked(agent_id, true, [&](JsAgentRecord* rec) -> StatusOr<bool> {
                       before = LeaseOf(*rec);
                       ASSIGN_OR_RETURN(decided, decide(before));
                       if (!decided.write) return false;
                       rec->agent_id = agent_id;
                       rec->lease_holder = decided.lease.holder;
                       rec->lease_epoch = decided.lease.epoch;
                       rec->lease_expires_at_ms = decided.lease.expires_at_ms;
                       rec->updated_at_ms = now_ms;
                       return true;
                     }));
    (void)r;
  }
  // Every lease change is carried into the journal: a new holder or epoch as a fence, a release
  // as a release mark (see the header comment). A renewal finds them there already (no request
  // when this handle wrote them); a holder that crashed between its record and its fence
  // publishes the fence on its next acquire.
  if (decided.write) {
    RETURN_IF_ERROR(FenceJournal(agent_id, decided.lease.holder, decided.lease.epoch,
                                 decided.lease.holder.empty()));
  }
  return decided;
}

}  // namespace agentckpt
