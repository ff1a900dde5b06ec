#include "store/backend_rules.h"

#include "common/ids.h"
#include "common/status_macros.h"

namespace agentckpt {

Status CheckPutArguments(const SealedCheckpoint& sealed, const PutOptions& opts) {
  RETURN_IF_ERROR(ValidateAgentId(sealed.doc.agent_id));
  if (opts.keep < 1) return InvalidArgumentError("keep must be at least 1");
  if (sealed.canonical.empty() || sealed.doc.content_sha256.size() != 64) {
    return InvalidArgumentError("Put needs a sealed checkpoint (see Seal)");
  }
  return OkStatus();
}

StatusOr<LeaseChange> DecideRenew(const Lease& current, const LeaseToken& mine, int64_t ttl_ms,
                                  int64_t now_ms) {
  if (current.holder != mine.holder || current.epoch != mine.epoch) {
    return FailedPreconditionError(LeaseLostMessage(mine, current.holder, current.epoch));
  }
  return LeaseChange{true, Lease{mine.holder, mine.epoch, now_ms + ttl_ms}};
}

LeaseChange DecideRelease(const Lease& current, const LeaseToken& mine) {
  if (current.holder != mine.holder || current.epoch != mine.epoch) return LeaseChange{};
  return LeaseChange{true, Lease{"", mine.epoch, 0}};
}

StatusOr<Lease> LeaseRecordStore::AcquireLease(const std::string& agent_id,
                                               const std::string& holder, int64_t ttl_ms,
                                               int64_t now_ms) {
  return AcquireOrTakeOverLease(agent_id, holder, ttl_ms, now_ms, nullptr);
}

StatusOr<Lease> LeaseRecordStore::AcquireOrTakeOverLease(const std::string& agent_id,
                                                         const std::string& holder, int64_t ttl_ms,
                                                         int64_t now_ms,
                                                         const HolderIsDead& is_dead) {
  ASSIGN_OR_RETURN(LeaseChange granted, ChangeLease(agent_id, now_ms, [&](const Lease& current) {
                     return DecideAcquire(current, holder, ttl_ms, now_ms, is_dead);
                   }));
  return granted.lease;
}

StatusOr<Lease> LeaseRecordStore::RenewLease(const std::string& agent_id, const LeaseToken& lease,
                                             int64_t ttl_ms, int64_t now_ms) {
  if (ttl_ms < 1) return InvalidArgumentError("lease ttl: must be positive");
  ASSIGN_OR_RETURN(LeaseChange renewed, ChangeLease(agent_id, now_ms, [&](const Lease& current) {
                     return DecideRenew(current, lease, ttl_ms, now_ms);
                   }));
  return renewed.lease;
}

Status LeaseRecordStore::ReleaseLease(const std::string& agent_id, const LeaseToken& lease,
                                      int64_t now_ms) {
  return ChangeLease(agent_id, now_ms,
                     [&](const Lease& current) -> StatusOr<LeaseChange> {
                       return DecideRelease(current, lease);
                     })
      .status();
}

Status CheckJournalEntries(const std::string& agent_id, const std::vector<JournalEntry>& entries) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].agent_id != agent_id) {
      return InvalidArgumentError("journal entry " + std::to_string(entries[i].sequence) +
                                  " is not agent " + agent_id + "'s");
    }
    if (i > 0 && entries[i].sequence != entries[i - 1].sequence + 1) {
      return InvalidArgumentError("journal entries are not consecutive");
    }
  }
  return OkStatus();
}

}  // namespace agentckpt
