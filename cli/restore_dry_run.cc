#include "cli/restore_dry_run.h"

#include <chrono>
#include <memory>

#include "common/env.h"
#include "redact/redactor.h"
#include "replay/jetstream_replay.h"
#include "restore/restore_result.h"

namespace agentckpt {
namespace {

// Wraps the JetStream replay: shows the phase on the progress line, and reads the stream and
// consumer given on the command line instead of those recorded in the checkpoint, if any.
class ReplayPhase : public ReplaySource {
 public:
  ReplayPhase(ReplaySource* inner, Progress* progress, std::string stream, std::string consumer)
      : inner_(inner),
        progress_(progress),
        stream_(std::move(stream)),
        consumer_(std::move(consumer)) {}

  StatusOr<ReplayResult> ReadSince(const NatsPosition& position, size_t max_messages,
                                   size_t max_body_bytes) override {
    NatsPosition p = position;
    if (!stream_.empty()) p.stream_name = stream_;
    if (!consumer_.empty()) p.consumer_name = consumer_;
    Show("restore (dry run): replaying " + p.stream_name + "/" + p.consumer_name +
         " after stream sequence " + std::to_string(p.last_acked_sequence));
    auto r = inner_->ReadSince(p, max_messages, max_body_bytes);
    Show("restore (dry run): building the prompt");
    return r;
  }

 private:
  void Show(const std::string& text) {
    if (progress_ != nullptr) progress_->Update(text, true);
  }
  ReplaySource* inner_;
  Progress* progress_;
  std::string stream_, consumer_;
};

}  // namespace

StatusOr<RestoreResult> RunRestoreDryRun(CheckpointStore* store, const DryRunRequest& r) {
  auto tokenizer = ParseTokenEncoding(r.settings.tokenizer);
  if (!tokenizer.ok()) return tokenizer.status().WithContext("--tokenizer");
  // Replayed bodies are redacted as the sidecar does, so the prompt is the one it would build.
  Redactor redactor;
  if (!r.settings.redact_patterns_file.empty()) {
    Status patterns = redactor.AddPatternsFromFile(r.settings.redact_patterns_file);
    if (!patterns.ok()) return patterns.WithContext("--redact-patterns");
  }
  std::unique_ptr<JetStreamReplaySource> jetstream;
  std::unique_ptr<ReplayPhase> replay;
  if (r.nats != nullptr) {
    jetstream = std::make_unique<JetStreamReplaySource>(
        r.nats, std::chrono::milliseconds(r.timeout_ms), Env::Default());
    replay = std::make_unique<ReplayPhase>(jetstream.get(), r.progress, r.stream, r.consumer);
  }
  RestoreOptions options;
  options.dry_run = true;
  options.replay_max = static_cast<size_t>(r.settings.replay_max);
  options.prompt_max_tokens = static_cast<size_t>(r.settings.prompt_max_tokens);
  options.stale_after_ms = r.settings.stale_after_s * 1000;
  options.workspace_dir = r.settings.workspace_dir;
  options.tokenizer = *tokenizer;
  options.redact = [&redactor](std::string_view text) { return redactor.Redact(text); };
  Restorer restorer(Env::Default(), store, replay.get(), /*events=*/nullptr, options);
  if (r.progress != nullptr) {
    r.progress->Update("restore (dry run): loading the latest verified checkpoint of " + r.agent_id,
                       true);
  }
  return restorer.Run(r.agent_id);
}

nlohmann::json RestoreDryRunJson(const std::string& agent_id, const RestoreResult& result,
                                 bool replay_configured) {
  nlohmann::json j = RestoredEventPayload(result);
  j["agentId"] = agent_id;
  j["dryRun"] = true;
  j["replayConfigured"] = replay_configured;
  j["prompt"] = result.prompt;
  return j;
}

}  // namespace agentckpt
