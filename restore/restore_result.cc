#include <cmath>

#include "restore/restorer.h"

namespace agentckpt {
namespace {

// Milliseconds rounded to microseconds, so the event stays short and stable to read.
double Ms(double ms) { return std::round(ms * 1000.0) / 1000.0; }

}  // namespace

nlohmann::json RestoreResult::EventJson() const {
  nlohmann::json j;
  j["coldStart"] = cold_start;
  j["checkpointId"] = cold_start ? nlohmann::json(nullptr) : nlohmann::json(checkpoint_id);
  j["sequenceNumber"] = sequence_number;
  j["ageMs"] = checkpoint_age_ms;
  j["stale"] = stale;
  j["skippedCorrupt"] = skipped.size();
  nlohmann::json sk = nlohmann::json::array();
  for (const SkippedCheckpoint& s : skipped) {
    sk.push_back({{"checkpointId", s.checkpoint_id},
                  {"sequenceNumber", s.sequence_number},
                  {"reason", s.reason}});
  }
  j["skipped"] = std::move(sk);
  if (expired) {
    j["expired"] = {{"checkpointId", expired->checkpoint_id},
                    {"sequenceNumber", expired->sequence_number},
                    {"reason", expired->reason}};
  }
  j["handled"] = handled;
  j["pending"] = pending;
  j["replayed"] = replayed;
  j["truncated"] = truncated;
  j["lost"] = lost;
  if (!replay_partial.empty()) j["replayPartial"] = replay_partial;
  if (!replay_error.empty()) j["replayError"] = replay_error;
  j["workspaceStashed"] = workspace_stashed;
  if (workspace_stashed) {
    j["stashMessage"] = stash_message;
    j["stashCommit"] = stash_commit;
  }
  if (workspace_conflict_left) j["workspaceChangesLeft"] = true;
  if (!workspace_error.empty()) j["workspaceError"] = workspace_error;
  if (!status_error.empty()) j["statusError"] = status_error;
  j["promptTokens"] = prompt_tokens;
  j["promptCut"] = prompt_cut;
  j["loadMs"] = Ms(timings.load_ms);
  j["replayMs"] = Ms(timings.replay_ms);
  j["workspaceMs"] = Ms(timings.workspace_ms);
  j["promptMs"] = Ms(timings.prompt_ms);
  j["resumeMs"] = Ms(timings.resume_ms);
  j["totalMs"] = Ms(timings.total_ms);
  return j;
}

}  // namespace agentckpt
