#include "restore/restorer.h"

#include <cmath>
#include <optional>
#include <utility>

#include "common/status_macros.h"
#include "common/time_format.h"
#include "gate/gate_record.h"
#include "restore/prompt_builder.h"
#include "restore/workspace_conflict.h"
#include "tracing/span.h"
#include "workspace/git_workspace.h"

namespace agentckpt {
namespace {

constexpr const char* kRecovering = "recovering";
constexpr const char* kActive = "active";

// Measures phases on the Env's monotonic clock.
class PhaseClock {
 public:
  explicit PhaseClock(Env* env) : env_(env), start_(env->NowMonotonicMicros()), last_(start_) {}
  // Milliseconds since the previous Lap (or the start).
  double Lap() {
    int64_t now = env_->NowMonotonicMicros();
    double ms = static_cast<double>(now - last_) / 1000.0;
    last_ = now;
    return ms;
  }
  double Total() const { return static_cast<double>(env_->NowMonotonicMicros() - start_) / 1000.0; }
  // The clock readings: the start and the last Lap (microseconds, the Env's monotonic clock).
  int64_t start() const { return start_; }
  int64_t last() const { return last_; }

 private:
  Env* env_;
  int64_t start_, last_;
};

// Passes the checkpoint's free text (written by the agent, possibly before redaction existed
// or by an older version) through `redact`, so the prompt never shows what it removes.
void RedactCheckpointText(const std::function<std::string(std::string_view)>& redact,
                          Checkpoint* cp) {
  auto apply = [&redact](std::string* text) {
    if (!text->empty()) *text = redact(*text);
  };
  if (cp->active_task) apply(&cp->active_task->title);
  ContextSummary& summary = cp->context_summary;
  apply(&summary.gathering_results);
  for (std::string& step : summary.plan_outline) apply(&step);
  apply(&summary.draft_content);
  for (ToolCallEntry& call : summary.tool_call_log) {
    apply(&call.input_summary);
    apply(&call.output_summary);
  }
}

}  // namespace

Restorer::Restorer(Env* env, CheckpointStore* store, ReplaySource* replay, RestoreEvents* events,
                   RestoreOptions options)
    : env_(env), store_(store), replay_(replay), events_(events), options_(std::move(options)) {}

// One Run's state, handed from phase to phase.
struct Restorer::RunState {
  RunState(Env* env, bool dry_run, bool has_events)
      : clock(env),
        started_unix_ms(env->NowUnixMillis()),
        live(!dry_run),
        announce(live && has_events) {}
  PhaseClock clock;
  const int64_t started_unix_ms;
  const bool live;        // not a dry run: status writes, stash and events
  const bool announce;    // live, with somewhere to publish
  double preload_ms = 0;  // the load of a preloaded checkpoint, counted in the load phase
  std::optional<Checkpoint> cp;
  std::optional<ReplayResult> replay;
  std::optional<Workspace> ws_now;
  JournalLoad journal;  // the journal folded into the checkpoint (load phase)
  WorkspaceAction workspace = WorkspaceAction::kLeave;  // whether the workspace step may stash
  RestoreResult r;
  // The phases' clock readings (start, then the end of load, replay, workspace, prompt and
  // resume), so each phase's span lasts exactly what its timing reports.
  std::vector<int64_t> marks;
};

namespace {

// The root span's attributes: what the restore found (docs/tracing.md).
void DescribeRestore(const std::string& agent_id, const RestoreResult& r, tracing::Span* span) {
  span->SetString("gen_ai.agent.id", agent_id);
  span->SetBool("agentckpt.restore.cold_start", r.cold_start);
  if (!r.cold_start) {
    span->SetString("agentckpt.checkpoint.id", r.checkpoint_id);
    span->SetInt("agentckpt.checkpoint.sequence", r.sequence_number);
  }
  span->SetInt("agentckpt.replay.handled", static_cast<int64_t>(r.handled));
  span->SetInt("agentckpt.replay.pending", static_cast<int64_t>(r.pending));
  span->SetInt("agentckpt.replay.replayed", static_cast<int64_t>(r.replayed));
  span->SetInt("agentckpt.replay.truncated", static_cast<int64_t>(r.truncated));
  span->SetInt("agentckpt.prompt.tokens", static_cast<int64_t>(r.prompt_tokens));
}

// One child span of `root` per phase, from the clock readings in `marks` (the load phase starts
// `preload_micros` before the run: the preloaded checkpoint's load is part of it).
void EmitPhaseSpans(const tracing::Span& root, const std::vector<int64_t>& marks,
                    int64_t preload_micros, const RestoreResult& r) {
  static constexpr const char* kPhases[] = {"load", "replay", "workspace", "prompt", "resume"};
  for (size_t i = 0; i + 1 < marks.size() && i < std::size(kPhases); ++i) {
    int64_t start = marks[i] - (i == 0 ? preload_micros : 0);
    tracing::Span span = tracing::StartSpanAt(std::string("agentckpt.restore.") + kPhases[i],
                                              tracing::SpanKind::kInternal, root.context(), start);
    span.SetString("agentckpt.restore.phase", kPhases[i]);
    if (i == 0 && !r.cold_start) {
      span.SetString("agentckpt.checkpoint.id", r.checkpoint_id);
      span.SetInt("agentckpt.checkpoint.sequence", r.sequence_number);
      span.SetInt("agentckpt.checkpoint.skipped", static_cast<int64_t>(r.skipped.size()));
    }
    if (i == 1) {
      span.SetInt("agentckpt.replay.replayed", static_cast<int64_t>(r.replayed));
      if (!r.replay_error.empty()) span.SetError(r.replay_error);
    }
    if (i == 2 && !r.workspace_error.empty()) span.SetError(r.workspace_error);
    if (i == 3) span.SetInt("agentckpt.prompt.tokens", static_cast<int64_t>(r.prompt_tokens));
    if (i == 4 && !r.status_error.empty()) span.SetError(r.status_error);
    span.EndAt(marks[i + 1]);
  }
}

}  // namespace

StatusOr<RestoreResult> Restorer::Run(const std::string& agent_id, PreloadedLatest* preloaded,
                                      WorkspaceAction workspace) {
  std::lock_guard<std::mutex> lock(mu_);
  RunState run(env_, options_.dry_run, events_ != nullptr);
  run.workspace = workspace;
  run.marks.push_back(run.clock.start());
  // The root span starts with the load, a preloaded one included, and is the current context
  // of the phases, so the events they publish carry it (traceparent) and checkpoint.restored
  // names its trace.
  const int64_t preload_micros =
      preloaded != nullptr ? static_cast<int64_t>(std::llround(preloaded->load_ms * 1000.0)) : 0;
  tracing::Span root =
      tracing::StartSpanAt("agentckpt.restore", tracing::SpanKind::kInternal,
                           tracing::CurrentContext(), run.clock.start() - preload_micros);
  tracing::SpanScope scope(root);
  if (root.context().valid()) run.r.trace_id = root.context().TraceIdHex();
  root.SetString("gen_ai.agent.id", agent_id);
  root.SetBool("agentckpt.restore.dry_run", options_.dry_run);
  if (Status loaded = LoadPhase(agent_id, preloaded, &run); !loaded.ok()) {  // 1. the checkpoint
    run.marks.push_back(run.clock.last());
    EmitPhaseSpans(root, run.marks, preload_micros, run.r);
    root.SetError(loaded);
    return loaded;
  }
  ReplayPhase(&run);            // 2. what arrived since it
  PromptPhase(agent_id, &run);  // 3. the workspace, then the prompt
  ResumePhase(agent_id, &run);  // 4. "active"; checkpoint.restored
  EmitPhaseSpans(root, run.marks, preload_micros, run.r);
  DescribeRestore(agent_id, run.r, &root);
  return std::move(run.r);
}

Status Restorer::LoadPhase(const std::string& agent_id, PreloadedLatest* preloaded, RunState* run) {
  RestoreResult& r = run->r;
  const int64_t started_unix_ms = run->started_unix_ms;
  const bool live = run->live;
  const bool announce = run->announce;
  if (live) {
    Status s = store_->SetAgentStatus(agent_id, kRecovering, started_unix_ms);
    if (!s.ok()) r.status_error = s.ToString();
    if (announce) events_->PublishStatus(agent_id, kRecovering);
  }

  // Phase 1: load the newest checkpoint that verifies.
  std::optional<Checkpoint>& cp = run->cp;
  double& preload_ms = run->preload_ms;
  StatusOr<LatestVerified> latest = NotFoundError("not loaded");
  if (preloaded != nullptr) {
    latest = std::move(preloaded->latest);
    preload_ms = preloaded->load_ms;
  } else {
    latest = store_->GetLatestVerified(agent_id);
  }
  JournalLoad& journal = run->journal;
  if (latest.ok() && latest->checkpoint.expire_at_ms > 0 &&
      latest->checkpoint.expire_at_ms <= started_unix_ms) {
    // Past its expireAt (CKPT_TTL_DAYS): never used, even before the sweep deletes it. Older
    // checkpoints expired earlier still, so this is a cold start.
    const Checkpoint& old = latest->checkpoint;
    r.expired = SkippedCheckpoint{old.checkpoint_id, old.sequence_number,
                                  "expired at " + FormatRfc3339Millis(old.expire_at_ms)};
    r.cold_start = true;
  } else if (latest.ok()) {
    cp = std::move(latest->checkpoint);
    journal = FoldStoredJournal(store_, &*cp);  // before redaction: entries were redacted
    r.skipped = std::move(latest->skipped);
    if (options_.redact) {
      RedactCheckpointText(options_.redact, &*cp);
      // A damaged document's decode error may quote its text.
      for (SkippedCheckpoint& s : r.skipped) s.reason = options_.redact(s.reason);
    }
    r.checkpoint_id = cp->checkpoint_id;
    r.sequence_number = cp->sequence_number;
    r.checkpoint_timestamp_ms = cp->timestamp_ms;
    r.checkpoint_age_ms = started_unix_ms - cp->timestamp_ms;
    r.stale = r.checkpoint_age_ms > options_.stale_after_ms;
  } else if (latest.status().code() == StatusCode::kNotFound) {
    r.cold_start = true;
    // No checkpoint yet: the journal alone may hold the agent's context.
    Checkpoint empty;
    empty.agent_id = agent_id;
    empty.timestamp_ms = started_unix_ms;
    journal = FoldStoredJournal(store_, &empty);
    if (journal.fold.applied > 0) cp = std::move(empty);
  } else {
    Status failed = latest.status().WithContext("loading the latest checkpoint of " + agent_id);
    if (announce) events_->PublishFailed(agent_id, failed);
    return failed;
  }
  if (journal.journal) {
    r.journal = {{"applied", journal.fold.applied},
                 {"lastSequence", journal.fold.last_sequence},
                 {"checkpointSequence", journal.base_sequence},
                 {"stopped", journal.fold.stopped}};
    if (journal.fold.stopped) {
      r.journal["stoppedAt"] = journal.fold.stopped_at;
      r.journal["stopReason"] = journal.fold.stop_reason;
      r.journal["notApplied"] = journal.fold.not_applied;
    }
    if (!journal.error.empty()) r.journal["error"] = journal.error;
  }
  if (cp && cp->ledger) r.outcome_unknown_calls = static_cast<int64_t>(cp->ledger->open.size());
  for (const LedgerCall& c : journal.fold.completed_calls) {
    if (c.effect == ToolEffect::kWrite) ++r.completed_writes_since_checkpoint;
  }
  if (cp && !cp->gates.empty()) {
    auto gates = GatesFromJson(nlohmann::json::parse(cp->gates, nullptr, false));
    if (gates.ok()) {
      for (const Gate& g : *gates) {
        if (!g.consumed) r.gates.push_back(GateToJson(g));
      }
    }
  }
  r.timings.load_ms = preload_ms + run->clock.Lap();
  run->marks.push_back(run->clock.last());
  return OkStatus();
}

void Restorer::ReplayPhase(RunState* run) {
  RestoreResult& r = run->r;
  const std::optional<Checkpoint>& cp = run->cp;
  // Phase 2: dry-run replay of what arrived since the checkpoint. Failures become a warning.
  std::optional<ReplayResult>& replay = run->replay;
  if (cp && replay_ != nullptr) {
    if (!cp->nats_position) {
      r.replay_error = "the checkpoint has no stream position";
    } else {
      auto read = replay_->ReadSince(*cp->nats_position, options_.replay_max,
                                     options_.replay_body_max_bytes);
      if (read.ok()) {
        replay = std::move(read).value();
        if (options_.redact) {
          for (ReplayedMessage& m : replay->messages) m.data = options_.redact(m.data);
        }
        r.handled = replay->handled_count;
        r.pending = replay->pending_count;
        r.replayed = replay->messages.size();
        r.truncated = replay->truncated;
        r.lost = replay->lost;
        if (replay->partial) r.replay_partial = replay->partial_reason;
      } else {
        r.replay_error = read.status().ToString();
      }
    }
  }
  r.timings.replay_ms = run->clock.Lap();
  run->marks.push_back(run->clock.last());
}

void Restorer::WorkspaceStep(RunState* run) {
  RestoreResult& r = run->r;
  const std::optional<Checkpoint>& cp = run->cp;
  const bool live = run->live;
  PhaseClock& clock = run->clock;
  // Workspace: read it. Only the agent's own start (kStashConflicts) stashes uncommitted
  // changes the checkpoint does not account for; any other run leaves the tree as it is.
  std::optional<Workspace>& ws_now = run->ws_now;
  if (!options_.workspace_dir.empty()) {
    auto ws = ReadWorkspace(options_.workspace_dir);
    if (!ws.ok()) {
      r.workspace_error = ws.status().ToString();
    } else {
      ws_now = std::move(ws).value();
      const bool conflict = cp && WorkspaceConflicts(*ws_now, cp->workspace);
      const bool stash = live && run->workspace == WorkspaceAction::kStashConflicts;
      r.workspace_conflict_left = conflict && !stash;
      if (conflict && stash) {
        std::string message = StashMessageFor(cp->checkpoint_id, cp->sequence_number);
        auto stash = StashChanges(options_.workspace_dir, message);
        if (stash.ok()) {
          r.workspace_stashed = true;
          r.stash_message = std::move(message);
          r.stash_commit = std::move(stash).value();
        } else {
          r.workspace_error = "stash failed: " + stash.status().ToString();
        }
      }
    }
  }
  r.timings.workspace_ms = clock.Lap();
  run->marks.push_back(clock.last());
}

void Restorer::PromptPhase(const std::string& agent_id, RunState* run) {
  WorkspaceStep(run);
  RestoreResult& r = run->r;
  const std::optional<Checkpoint>& cp = run->cp;
  const std::optional<ReplayResult>& replay = run->replay;
  // Phase 3: the restoration prompt.
  PromptInput in;
  in.agent_id = agent_id;
  in.checkpoint = cp ? &*cp : nullptr;
  in.checkpoint_age_ms = r.checkpoint_age_ms;
  in.stale = r.stale;
  in.stale_after_ms = options_.stale_after_ms;
  in.skipped = r.skipped;
  in.journal_note = DescribeJournalLoad(run->journal);
  for (const LedgerCall& c : run->journal.fold.completed_calls) {
    if (c.effect == ToolEffect::kWrite) in.completed_writes.push_back(c);
  }
  if (options_.redact) in.journal_note = options_.redact(in.journal_note);
  in.replay_configured = replay_ != nullptr;
  in.replay = replay ? &*replay : nullptr;
  in.replay_error = r.replay_error;
  in.workspace_now = run->ws_now;
  in.workspace_error = r.workspace_error;
  in.workspace_stashed = r.workspace_stashed;
  in.workspace_conflict_left = r.workspace_conflict_left;
  in.stash_message = r.stash_message;
  in.stash_commit = r.stash_commit;
  PromptOptions popts;
  popts.max_tokens = options_.prompt_max_tokens;
  popts.tokenizer = options_.tokenizer;
  popts.message_body_max_bytes = options_.prompt_body_max_bytes;
  RestorationPrompt prompt = BuildRestorationPrompt(in, popts);
  r.prompt = std::move(prompt.text);
  r.prompt_tokens = prompt.tokens;
  r.prompt_cut = std::move(prompt.cut);
  r.timings.prompt_ms = run->clock.Lap();
  run->marks.push_back(run->clock.last());
}

void Restorer::ResumePhase(const std::string& agent_id, RunState* run) {
  RestoreResult& r = run->r;
  PhaseClock& clock = run->clock;
  const bool live = run->live;
  const bool announce = run->announce;
  // Phase 4: resume: the agent is active again, then checkpoint.restored with the timings.
  if (live) {
    Status s = store_->SetAgentStatus(agent_id, kActive, env_->NowUnixMillis());
    if (!s.ok() && r.status_error.empty()) r.status_error = s.ToString();
    if (announce) events_->PublishStatus(agent_id, kActive);
  }
  r.timings.resume_ms = clock.Lap();
  run->marks.push_back(clock.last());
  r.timings.total_ms = run->preload_ms + clock.Total();
  if (announce) events_->PublishRestored(agent_id, r);
}

}  // namespace agentckpt
