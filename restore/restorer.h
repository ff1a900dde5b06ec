// Restorer: turns the latest verified checkpoint plus the JetStream messages since into a
// restoration prompt, in four timed phases: load, replay, prompt (after reading, and if need be
// stashing, the workspace) and resume. RestoreResult holds what the phases found; the
// checkpoint.restored event built from it is restore/restore_result.h. See docs/restoration.md.
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
#include "restore/token_counter.h"
#include "store/checkpoint_store.h"
#include "store/journal_load.h"

namespace agentckpt {

struct RestoreOptions {
  int64_t stale_after_ms = 900'000;  // CKPT_STALE_AFTER_S
  size_t replay_max = 50;            // CKPT_REPLAY_MAX
  size_t replay_body_max_bytes = 2048;
  size_t prompt_body_max_bytes = 600;  // per replayed body shown in the prompt
  size_t prompt_max_tokens = 4000;     // CKPT_PROMPT_MAX_TOKENS
  // CKPT_TOKENIZER: the encoding the prompt's tokens are counted in.
  TokenEncoding tokenizer = TokenEncoding::kO200kBase;
  std::string workspace_dir;  // WORKSPACE_DIR; empty: no workspace handling
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

// What the phases of one restore found, phase by phase.
struct RestoreResult {
  // Load: the checkpoint used (none on a cold start) and the newer damaged ones passed over.
  bool cold_start = false;  // no checkpoint at all for the agent (or only expired ones)
  // The newest checkpoint, when it was past its expireAt at the restore's start and so not used.
  std::optional<SkippedCheckpoint> expired;
  std::string checkpoint_id;
  int64_t sequence_number = 0;
  int64_t checkpoint_timestamp_ms = 0;
  int64_t checkpoint_age_ms = 0;  // restore start (Env wall clock) minus the timestamp
  bool stale = false;
  std::vector<SkippedCheckpoint> skipped;  // corrupted newer checkpoints passed over
  // Replay: the JetStream messages since the checkpoint.
  uint64_t handled = 0, pending = 0, replayed = 0, truncated = 0;
  uint64_t lost = 0;           // messages after the checkpoint the stream no longer holds
  std::string replay_partial;  // non-empty: the replay's deadline passed (why); counts kept
  std::string replay_error;    // non-empty if replay could not run (prompt says so)
  // Workspace (read before the prompt): stashed uncommitted changes, or why it could not be.
  bool workspace_stashed = false;
  // The tree holds uncommitted changes the checkpoint does not account for, and this run left
  // them in place (it was not the agent's own start, see WorkspaceAction).
  bool workspace_conflict_left = false;
  std::string stash_message;
  std::string stash_commit;     // hex id of the stash commit when stashed
  std::string workspace_error;  // non-empty if the workspace could not be read or stashed
  // Load and resume: writing the agent's status.
  std::string status_error;  // non-empty if writing the agent's status failed
  // Prompt.
  size_t prompt_tokens = 0;
  std::vector<std::string> prompt_cut;  // prompt sections shortened to fit the token limit
  std::string prompt;
  PhaseTimings timings;
  // The trace of this restore's `agentckpt.restore` span (32 hex), when tracing is on.
  std::string trace_id;
  // The journal folded into the checkpoint's context (docs/journal.md): applied entries, the
  // sequence reached, where and why the fold stopped. Empty object when the store keeps none.
  nlohmann::json journal = nlohmann::json::object();
  // The tool-call ledger (docs/tool-call-ledger.md): calls open at the crash (now
  // outcome_unknown) and write calls the journal after the checkpoint completed.
  int64_t outcome_unknown_calls = 0;
  int64_t completed_writes_since_checkpoint = 0;
  // The approval gates still to act on (docs/gates.md): pending ones and decisions not yet
  // consumed, each as gate.schema.json. Empty when there are none.
  nlohmann::json gates = nlohmann::json::array();
};

// Where the Restorer announces status and results (NATS in the sidecar). Implementations must
// not throw; failures to publish are logged by them, not fatal to a restore.
class RestoreEvents {
 public:
  virtual ~RestoreEvents() = default;
  // agent.{id}.status with {"agentId","status","at"}; status is "recovering" or "active".
  virtual void PublishStatus(const std::string& agent_id, const std::string& status) = 0;
  // agent.{id}.checkpoint.restored with RestoredEventPayload(result) (restore_result.h).
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
  struct RunState;  // one Run's state, handed from phase to phase (restorer.cc)
  // The phases of Run, in order. Each records what it found and its time in the result.
  // Phase 1: marks the agent "recovering", then loads (or takes the preloaded) checkpoint.
  // The store's error (with a checkpoint.failed event) if it cannot be read; a cold start is OK.
  Status LoadPhase(const std::string& agent_id, PreloadedLatest* preloaded, RunState* run);
  // Phase 2: the dry-run replay since the checkpoint; a failure is kept as replay_error.
  void ReplayPhase(RunState* run);
  // Phase 3: the workspace (WorkspaceStep), then the restoration prompt.
  void PromptPhase(const std::string& agent_id, RunState* run);
  // Reads the workspace and stashes changes that conflict with the checkpoint (live runs).
  void WorkspaceStep(RunState* run);
  // Phase 4: marks the agent "active" and publishes checkpoint.restored.
  void ResumePhase(const std::string& agent_id, RunState* run);

  Env* env_;
  CheckpointStore* store_;
  ReplaySource* replay_;
  RestoreEvents* events_;
  RestoreOptions options_;
  std::mutex mu_;  // serialises Run
};

}  // namespace agentckpt
