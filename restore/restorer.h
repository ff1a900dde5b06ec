// Restorer: turns the latest verified checkpoint plus the JetStream messages since into a
// restoration prompt, in four timed phases (load, replay, prompt, resume). See DESIGN.md.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/env.h"
#include "common/status.h"
#include "replay/replay_source.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

struct RestoreOptions {
  int64_t stale_after_ms = 900'000;  // CKPT_STALE_AFTER_S
  size_t replay_max = 50;            // CKPT_REPLAY_MAX
  size_t replay_body_max_bytes = 2048;
  size_t prompt_body_max_bytes = 600;  // per replayed body shown in the prompt
  size_t prompt_max_tokens = 4000;     // CKPT_PROMPT_MAX_TOKENS
  std::string workspace_dir;           // WORKSPACE_DIR; empty: no workspace handling
  // Dry run (agentckpt restore --dry-run): no status write, no events published (and, like
  // every run not asked with WorkspaceAction::kStashConflicts, no stash).
  bool dry_run = false;
  // When set, every replayed message body, the loaded checkpoint's free text (task title,
  // gathering results, plan, draft, tool-call summaries) and the reasons of skipped damaged
  // checkpoints pass through it before they are used
  // (the sidecar removes secrets with redact/redactor.h), so the prompt never shows what it
  // removes.
  std::function<std::string(std::string_view)> redact;
};

struct PhaseTimings {
  double load_ms = 0, replay_ms = 0, prompt_ms = 0, resume_ms = 0, total_ms = 0;
  double workspace_ms = 0;  // reading (and stashing) the workspace, between replay and prompt
};

struct RestoreResult {
  bool cold_start = false;  // no checkpoint at all for the agent (or only expired ones)
  // The newest checkpoint, when it was past its expireAt at the restore's start and so not used.
  std::optional<SkippedCheckpoint> expired;
  std::string checkpoint_id;
  int64_t sequence_number = 0;
  int64_t checkpoint_timestamp_ms = 0;
  int64_t checkpoint_age_ms = 0;  // restore start (Env wall clock) minus the timestamp
  bool stale = false;
  std::vector<SkippedCheckpoint> skipped;  // corrupted newer checkpoints passed over
  uint64_t handled = 0, pending = 0, replayed = 0, truncated = 0;
  uint64_t lost = 0;           // messages after the checkpoint the stream no longer holds
  std::string replay_partial;  // non-empty: the replay's deadline passed (why); counts kept
  std::string replay_error;    // non-empty if replay could not run (prompt says so)
  bool workspace_stashed = false;
  // The tree holds uncommitted changes the checkpoint does not account for, and this run left
  // them in place (it was not the agent's own start, see WorkspaceAction).
  bool workspace_conflict_left = false;
  std::string stash_message;
  std::string stash_commit;     // hex id of the stash commit when stashed
  std::string workspace_error;  // non-empty if the workspace could not be read or stashed
  std::string status_error;     // non-empty if writing the agent's status failed
  size_t prompt_tokens = 0;
  std::vector<std::string> prompt_cut;  // prompt sections shortened to fit the token limit
  std::string prompt;
  PhaseTimings timings;
  // The checkpoint.restored event payload (DESIGN.md / issue: checkpointId, sequenceNumber,
  // stale, skippedCorrupt, handled, pending, replayed, truncated, promptTokens, phase timings,
  // totalMs, coldStart). Also: skipped (id, sequence, reason), ageMs, replayError,
  // lost, replayPartial (only when set),
  // expired (checkpointId, sequenceNumber, reason; only when the newest had expired),
  // workspaceStashed, stashMessage, workspaceChangesLeft (only when true), workspaceError,
  // statusError, promptCut. Timings are flat: loadMs, replayMs, workspaceMs, promptMs, resumeMs,
  // totalMs.
  nlohmann::json EventJson() const;
};

// Where the Restorer announces status and results (NATS in the sidecar). Implementations must
// not throw; failures to publish are logged by them, not fatal to a restore.
class RestoreEvents {
 public:
  virtual ~RestoreEvents() = default;
  // agent.{id}.status with {"agentId","status","at"}; status is "recovering" or "active".
  virtual void PublishStatus(const std::string& agent_id, const std::string& status) = 0;
  // agent.{id}.checkpoint.restored with result.EventJson().
  virtual void PublishRestored(const std::string& agent_id, const RestoreResult& result) = 0;
  // agent.{id}.checkpoint.failed with {"operation":"restore","reason"}.
  virtual void PublishFailed(const std::string& agent_id, const Status& status) = 0;
};

// A load the caller has already done (the sidecar loads once at start, for its own context and
// for the restore): a successful CheckpointStore::GetLatestVerified and how long it took.
struct PreloadedLatest {
  LatestVerified latest;
  double load_ms = 0;  // counted as the load phase of the restore
};

// What a run does to the agent's working tree (RestoreOptions::workspace_dir). Only the agent
// itself, at its own start, asks for kStashConflicts (the sidecar's POST /v1/agent-start): every
// other run (the sidecar's start-up restore, POST /v1/restore, NATS checkpoint.restore, a dry
// run) reads the tree and never changes it, since the agent may be writing to it right then.
enum class WorkspaceAction {
  kLeave,           // read the tree; never change it
  kStashConflicts,  // stash uncommitted changes the checkpoint does not account for
};

class Restorer {
 public:
  // Pointers are borrowed and must outlive the Restorer. `replay` may be null (no JetStream
  // configured: the replay phase is skipped and the prompt says so). `events` may be null
  // (nothing is published).
  Restorer(Env* env, CheckpointStore* store, ReplaySource* replay, RestoreEvents* events,
           RestoreOptions options);

  // Runs a restore for `agent_id`: marks the agent "recovering" (store + event), loads (or takes
  // `preloaded`, whose checkpoint it consumes), replays, reads the workspace (and, only with
  // `workspace` = kStashConflicts and not a dry run, stashes uncommitted changes the checkpoint
  // does not account for), builds the prompt, marks the agent "active" (store + event) and
  // publishes checkpoint.restored. A cold start (no checkpoint) is an OK result with
  // cold_start = true. Errors: kUnavailable if the store cannot be read (a failed event is
  // published). Thread-safe: concurrent calls are serialised.
  StatusOr<RestoreResult> Run(const std::string& agent_id, PreloadedLatest* preloaded = nullptr,
                              WorkspaceAction workspace = WorkspaceAction::kLeave);

 private:
  Env* env_;
  CheckpointStore* store_;
  ReplaySource* replay_;
  RestoreEvents* events_;
  RestoreOptions options_;
  std::mutex mu_;  // serialises Run
};

}  // namespace agentckpt
