// The CheckpointStore lease defaults and the shared lease messages.
#include "common/time_format.h"
#include "store/checkpoint_store.h"

namespace agentckpt {
namespace {

Status NotSupported() {
  return FailedPreconditionError("lease: this store does not implement writer leases");
}

}  // namespace

StatusOr<Lease> CheckpointStore::AcquireLease(const std::string&, const std::string&, int64_t,
                                              int64_t) {
  return NotSupported();
}

StatusOr<Lease> CheckpointStore::AcquireOrTakeOverLease(const std::string& agent_id,
                                                        const std::string& holder, int64_t ttl_ms,
                                                        int64_t now_ms, const HolderIsDead&) {
  return AcquireLease(agent_id, holder, ttl_ms, now_ms);
}

StatusOr<Lease> CheckpointStore::RenewLease(const std::string&, const LeaseToken&, int64_t,
                                            int64_t) {
  return NotSupported();
}

Status CheckpointStore::ReleaseLease(const std::string&, const LeaseToken&, int64_t) {
  return NotSupported();
}

std::string LeaseLostMessage(const LeaseToken& mine, const std::string& current_holder,
                             int64_t current_epoch) {
  std::string msg = "lease lost: epoch " + std::to_string(mine.epoch) + " of holder " + mine.holder;
  if (current_epoch != mine.epoch && !current_holder.empty()) {
    return msg + " taken over by holder " + current_holder + " at epoch " +
           std::to_string(current_epoch);
  }
  if (current_holder.empty())
    return msg + " was released (current epoch " + std::to_string(current_epoch) + ")";
  return msg + " is now held by " + current_holder + " at epoch " + std::to_string(current_epoch);
}

std::string LeaseHeldMessage(const std::string& holder, int64_t epoch, int64_t expires_at_ms) {
  return "lease held by " + holder + " (epoch " + std::to_string(epoch) + ") until " +
         FormatRfc3339Millis(expires_at_ms);
}

StatusOr<LeaseChange> DecideAcquire(const Lease& current, const std::string& holder, int64_t ttl_ms,
                                    int64_t now_ms, const HolderIsDead& is_dead) {
  if (holder.empty()) return InvalidArgumentError("lease holder: empty");
  if (ttl_ms < 1) return InvalidArgumentError("lease ttl: must be positive");
  const bool live = !current.holder.empty() && current.expires_at_ms > now_ms;
  const bool other = current.holder != holder;
  Lease next{holder, current.epoch + (other ? 1 : 0), now_ms + ttl_ms};
  if (live && other) {
    if (!is_dead || !is_dead(current.holder)) {
      return FailedPreconditionError(
          LeaseHeldMessage(current.holder, current.epoch, current.expires_at_ms));
    }
    next.taken_over_from = current.holder;
  }
  return LeaseChange{true, next};
}

}  // namespace agentckpt
