// Approval gates read from and decided in the store directly, for `agentckpt gate` when the
// agent's sidecar is down (docs/gates.md "No decision lost"). A decision is written the way the
// sidecar writes it: under the agent's writer lease (so it is refused while a live sidecar holds
// the lease: fencing), as a gate.resolve journal entry chained to the last one, which the
// sidecar folds in at its next start. Thread-safe (each call takes and releases the lease).
#pragma once

#include <string>
#include <vector>

#include "common/env.h"
#include "common/status.h"
#include "gate/gate_rules.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

// The agent's gates as of the latest verified checkpoint plus the journal after it. kDataLoss
// when the journal cannot be read or stops at a damaged entry (the gates could be older).
StatusOr<std::vector<Gate>> LoadGatesFromStore(CheckpointStore* store, const std::string& agent_id);

// Applies `r` under the writer lease (expiring the gate first when due), with the rules of
// gate/gate_rules.h: the gate afterwards (unchanged when the same decision was already there).
// kFailedPrecondition "lease held by ..." while a sidecar holds the lease; kNotFound; the rules'
// errors (kAlreadyExists "conflict: ...", kFailedPrecondition "argsSha256: ..."); kDataLoss as
// LoadGatesFromStore (also when the stored journal runs past the fold);
// kFailedPrecondition for a store without a journal. When this process took longer than 2/3 of
// the lease's ttl (30 s) between taking the lease and an append, the append counts only after a
// renewal finds the lease still this command's (LeaseKeeper::ConfirmHeld): kFailedPrecondition
// "lease lost: ..." when a sidecar took it over meanwhile, kUnavailable when the store cannot say.
StatusOr<Gate> ResolveGateInStore(CheckpointStore* store, Env* env, const std::string& agent_id,
                                  const GateResolution& r);

}  // namespace agentckpt
