// Rules every store backend applies the same way (store/sqlite/, store/firestore/): the
// arguments a Put accepts and the lease changes RenewLease and ReleaseLease make. Backends only
// run these inside their own transaction or commit. Pure functions: thread-safe, never throw.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

// The checks a Put makes before it touches the store: a valid agent id, keep >= 1 and a sealed
// checkpoint. kInvalidArgument naming what is wrong.
Status CheckPutArguments(const SealedCheckpoint& sealed, const PutOptions& opts);

// The checks an AppendJournal makes before it touches the store: a valid agent id, every entry
// the agent's, consecutive sequences. kInvalidArgument naming what is wrong.
Status CheckJournalEntries(const std::string& agent_id, const std::vector<JournalEntry>& entries);

// The lease an agent record holds (a record with lease_holder, lease_epoch and
// lease_expires_at_ms, as each backend keeps it).
template <typename Record>
Lease LeaseOf(const Record& record) {
  return Lease{record.lease_holder, record.lease_epoch, record.lease_expires_at_ms};
}

// RenewLease's change to the agent's `current` lease: extended to now_ms + ttl_ms if it is still
// `mine`. kFailedPrecondition "lease lost: ..." if another holder or epoch has it since.
// (RenewLease checks ttl_ms >= 1 before it reads the record.)
StatusOr<LeaseChange> DecideRenew(const Lease& current, const LeaseToken& mine, int64_t ttl_ms,
                                  int64_t now_ms);

// ReleaseLease's change to the agent's `current` lease: released (no holder, expiry 0, the epoch
// kept) if it is still `mine`, else no change. Never fails.
LeaseChange DecideRelease(const Lease& current, const LeaseToken& mine);

// A backend that keeps the writer lease in the agent's record. It implements one atomic change
// of that record (ChangeLease); the four lease methods of CheckpointStore are built on it with
// the rules above, the same for every backend.
class LeaseRecordStore : public CheckpointStore {
 public:
  // As CheckpointStore (checkpoint_store.h): the decisions are DecideAcquire, DecideRenew and
  // DecideRelease; ChangeLease's errors (kUnavailable, kInvalidArgument for a bad agent id)
  // pass through. Thread-safe as ChangeLease is.
  StatusOr<Lease> AcquireLease(const std::string& agent_id, const std::string& holder,
                               int64_t ttl_ms, int64_t now_ms) override;
  StatusOr<Lease> AcquireOrTakeOverLease(const std::string& agent_id, const std::string& holder,
                                         int64_t ttl_ms, int64_t now_ms,
                                         const HolderIsDead& is_dead) override;
  StatusOr<Lease> RenewLease(const std::string& agent_id, const LeaseToken& lease, int64_t ttl_ms,
                             int64_t now_ms) override;
  Status ReleaseLease(const std::string& agent_id, const LeaseToken& lease,
                      int64_t now_ms) override;

 protected:
  // Decides the lease to store given the agent's current one (write=false: store nothing).
  using LeaseDecision = std::function<StatusOr<LeaseChange>(const Lease& current)>;
  // Atomically: reads the agent's record, asks `decide` and stores the lease it returns (when
  // write is set). Returns what `decide` returned, or the store's error. Thread-safe.
  virtual StatusOr<LeaseChange> ChangeLease(const std::string& agent_id, int64_t now_ms,
                                            const LeaseDecision& decide) = 0;
};

}  // namespace agentckpt
