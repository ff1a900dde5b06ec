#include "sidecar/restore_service.h"

#include <chrono>

#include "restore/restore_result.h"

namespace agentckpt {
namespace {

RestoreOptions OptionsFrom(const SidecarConfig& c, const Redactor* redactor) {
  RestoreOptions o;
  if (redactor != nullptr) {
    o.redact = [redactor](std::string_view text) { return redactor->Redact(text); };
  }
  o.stale_after_ms = c.stale_after_s * 1000;
  o.replay_max = static_cast<size_t>(c.replay_max);
  o.prompt_max_tokens = static_cast<size_t>(c.prompt_max_tokens);
  if (auto tokenizer = ParseTokenEncoding(c.tokenizer); tokenizer.ok()) o.tokenizer = *tokenizer;
  o.workspace_dir = c.workspace_dir;
  return o;
}

void ObserveRestoreMetrics(const RestoreResult& r, int64_t now_unix_ms, Metrics* metrics) {
  const PhaseTimings& t = r.timings;
  metrics->ObserveRestore(t.total_ms / 1000.0, now_unix_ms);
  const std::pair<const char*, double> phases[] = {{"load", t.load_ms},
                                                   {"replay", t.replay_ms},
                                                   {"workspace", t.workspace_ms},
                                                   {"prompt", t.prompt_ms},
                                                   {"resume", t.resume_ms}};
  for (const auto& [phase, ms] : phases) metrics->ObserveRestorePhase(phase, ms / 1000.0);
  metrics->ObservePromptTokens(static_cast<int64_t>(r.prompt_tokens));
  metrics->SetLedgerOutcomeUnknown(r.outcome_unknown_calls);
  if (!r.cold_start) metrics->SetLastCheckpointTime(r.checkpoint_timestamp_ms);
}

}  // namespace

RestoreService::RestoreService(Env* env, CheckpointStore* store, NatsLink* link,
                               const SidecarConfig& config, const Redactor* redactor)
    : env_(env),
      agent_id_(config.agent_id),
      replay_(
          config.js_stream.empty()
              ? nullptr
              : std::make_unique<JetStreamReplaySource>(
                    link->connection(), std::chrono::milliseconds(config.replay_timeout_ms), env)),
      events_(link, env, redactor),
      redactor_(redactor),
      restorer_(env, store, replay_.get(), &events_, OptionsFrom(config, redactor)) {}

StatusOr<nlohmann::json> RestoreService::Run(PreloadedLatest* preloaded) {
  return RunWith(preloaded, WorkspaceAction::kLeave);
}

StatusOr<nlohmann::json> RestoreService::RunForAgentStart() {
  return RunWith(nullptr, WorkspaceAction::kStashConflicts);
}

StatusOr<nlohmann::json> RestoreService::RunWith(PreloadedLatest* preloaded,
                                                 WorkspaceAction workspace) {
  auto result = restorer_.Run(agent_id_, preloaded, workspace);
  if (!result.ok()) {
    if (metrics_ != nullptr) metrics_->CountRestoreFailure();
    return result.status();
  }
  if (metrics_ != nullptr) ObserveRestoreMetrics(*result, env_->NowUnixMillis(), metrics_);
  nlohmann::json j = RestoredEventPayload(*result);
  // The metadata as published on checkpoint.restored (e.g. a skipped checkpoint's reason); the
  // prompt is redacted as it is built (RestoreOptions::redact).
  if (redactor_ != nullptr) redactor_->RedactJson(&j);
  j["prompt"] = result->prompt;
  std::lock_guard<std::mutex> lock(mu_);
  last_ = j;
  if (!result->cold_start) last_checkpoint_id_ = result->checkpoint_id;
  return j;
}

StatusOr<nlohmann::json> RestoreService::Last() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!last_) return NotFoundError("no restoration has run yet");
  return *last_;
}

std::optional<std::string> RestoreService::last_checkpoint_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_checkpoint_id_;
}

}  // namespace agentckpt
