#include "restore/restore_result.h"

#include <cmath>

namespace agentckpt {
namespace {

// Milliseconds rounded to microseconds, so the event stays short and stable to read.
double Ms(double ms) { return std::round(ms * 1000.0) / 1000.0; }

}  // namespace

nlohmann::json RestoredEventPayload(const RestoreResult& r) {
  nlohmann::json j;
  j["coldStart"] = r.cold_start;
  j["checkpointId"] = r.cold_start ? nlohmann::json(nullptr) : nlohmann::json(r.checkpoint_id);
  j["sequenceNumber"] = r.sequence_number;
  j["ageMs"] = r.checkpoint_age_ms;
  j["stale"] = r.stale;
  j["skippedCorrupt"] = r.skipped.size();
  nlohmann::json sk = nlohmann::json::array();
  for (const SkippedCheckpoint& s : r.skipped) {
    sk.push_back({{"checkpointId", s.checkpoint_id},
                  {"sequenceNumber", s.sequence_number},
                  {"reason", s.reason}});
  }
  j["skipped"] = std::move(sk);
  if (r.expired) {
    j["expired"] = {{"checkpointId", r.expired->checkpoint_id},
                    {"sequenceNumber", r.expired->sequence_number},
                    {"reason", r.expired->reason}};
  }
  j["handled"] = r.handled;
  j["pending"] = r.pending;
  j["replayed"] = r.replayed;
  j["truncated"] = r.truncated;
  j["lost"] = r.lost;
  if (!r.replay_partial.empty()) j["replayPartial"] = r.replay_partial;
  if (!r.replay_error.empty()) j["replayError"] = r.replay_error;
  j["workspaceStashed"] = r.workspace_stashed;
  if (r.workspace_stashed) {
    j["stashMessage"] = r.stash_message;
    j["stashCommit"] = r.stash_commit;
  }
  if (r.workspace_conflict_left) j["workspaceChangesLeft"] = true;
  if (!r.workspace_error.empty()) j["workspaceError"] = r.workspace_error;
  if (!r.status_error.empty()) j["statusError"] = r.status_error;
  if (!r.journal.empty()) j["journal"] = r.journal;
  j["outcomeUnknownCalls"] = r.outcome_unknown_calls;
  j["completedWritesSinceCheckpoint"] = r.completed_writes_since_checkpoint;
  if (!r.gates.empty()) j["gates"] = r.gates;
  j["promptTokens"] = r.prompt_tokens;
  j["promptCut"] = r.prompt_cut;
  j["loadMs"] = Ms(r.timings.load_ms);
  j["replayMs"] = Ms(r.timings.replay_ms);
  j["workspaceMs"] = Ms(r.timings.workspace_ms);
  j["promptMs"] = Ms(r.timings.prompt_ms);
  j["resumeMs"] = Ms(r.timings.resume_ms);
  j["totalMs"] = Ms(r.timings.total_ms);
  if (!r.trace_id.empty()) j["traceId"] = r.trace_id;
  return j;
}

}  // namespace agentckpt
