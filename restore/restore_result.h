// The checkpoint.restored event: its payload, built from what a restore's phases found
// (RestoreResult, restorer.h). docs/schemas/checkpoint-restored.schema.json is its contract.
#pragma once

#include <nlohmann/json.hpp>

#include "restore/restorer.h"

namespace agentckpt {

// The payload of agent.{id}.checkpoint.restored: coldStart, checkpointId (null on a cold
// start), sequenceNumber, ageMs, stale, skippedCorrupt and skipped (id, sequence, reason),
// handled, pending, replayed, truncated, replayError (when set), workspaceStashed (with
// stashMessage and stashCommit when stashed), workspaceError and statusError (when set),
// promptTokens, promptCut, and the phase timings flat: loadMs, replayMs, workspaceMs, promptMs,
// resumeMs, totalMs (rounded to microseconds), and traceId when the restore was traced. Pure:
// thread-safe, never throws.
nlohmann::json RestoredEventPayload(const RestoreResult& result);

}  // namespace agentckpt
