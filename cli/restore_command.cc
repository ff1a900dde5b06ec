#include "cli/restore_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/restore_dry_run.h"
#include "cli/terminal_output.h"
#include "nats/subjects.h"
#include "sidecar/config.h"

namespace agentckpt {
namespace {

using nlohmann::json;

std::string ReplayLine(const RestoreResult& r, bool configured) {
  if (r.cold_start) return "not run (no checkpoint)";
  if (!configured) return "not run (no --nats given)";
  if (!r.replay_error.empty()) return "not run: " + r.replay_error;
  return std::to_string(r.handled) + " handled, " + std::to_string(r.pending) + " pending, " +
         std::to_string(r.replayed) + " replayed, " + std::to_string(r.truncated) + " left out";
}

void PrintHuman(const std::string& agent, const RestoreResult& r, bool replay_configured) {
  std::printf("restore of %s (dry run: nothing published, stashed or written)\n\n", agent.c_str());
  Table t({"checkpoint", r.cold_start
                             ? "none: cold start"
                             : r.checkpoint_id + " (sequence " + std::to_string(r.sequence_number) +
                                   ", taken " + HumanAge(r.checkpoint_age_ms) +
                                   (r.stale ? ", stale" : "") + ")"});
  t.AddRow({"skipped", std::to_string(r.skipped.size()) + " corrupted"});
  for (const SkippedCheckpoint& s : r.skipped) {
    t.AddRow({"", "sequence " + std::to_string(s.sequence_number) + " " + s.checkpoint_id + ": " +
                      s.reason});
  }
  t.AddRow({"replay", ReplayLine(r, replay_configured)});
  if (!r.workspace_error.empty()) t.AddRow({"workspace", r.workspace_error});
  std::string prompt = std::to_string(r.prompt_tokens) + " tokens";
  for (size_t i = 0; i < r.prompt_cut.size(); ++i) {
    prompt += (i == 0 ? ", shortened: " : ", ") + r.prompt_cut[i];
  }
  t.AddRow({"prompt", prompt});
  t.Print(stdout);
  std::printf("\n");
  Table phases({"PHASE", "TIME"}, {1});
  phases.AddRow({"load", HumanMillis(r.timings.load_ms)});
  phases.AddRow({"replay", HumanMillis(r.timings.replay_ms)});
  phases.AddRow({"workspace", HumanMillis(r.timings.workspace_ms)});
  phases.AddRow({"prompt", HumanMillis(r.timings.prompt_ms)});
  phases.AddRow({"total", HumanMillis(r.timings.total_ms)});
  phases.Print(stdout);
  std::printf("\n----- restoration prompt -----\n%s\n----- end of prompt -----\n",
              r.prompt.c_str());
}

}  // namespace

RestoreCommand::RestoreCommand(CLI::App* app) {
  command_ = app->add_subcommand(
      "restore",
      "Dry-run a restore: print the restoration prompt and the phase timings (publishes "
      "nothing, stashes nothing, writes nothing; --dry-run is required)");
  CLI::App* c = command_;
  // The settings shared with `agentckpt run` are strings here, read and checked by its parser
  // (sidecar/config.h ResolveRestoreSettings) with their environment variables.
  auto shared = [&](const std::string& name, const std::string& setting, const std::string& help) {
    shared_flags_.push_back({setting, c->add_option(name, shared_values_[setting], help)});
  };
  shared("--agent", "agent-id", "Agent id (default: $AGENT_ID)");
  c->add_flag("--dry-run", dry_run_, "Required: run the phases without any side effect");
  AddStoreFlags(c, &store_);
  nats_flag_ = AddNatsClientFlags(c, &nats_, /*url_from_env=*/false);
  c->add_option("--stream", stream_,
                "Stream to replay (default: the one recorded in the checkpoint)");
  c->add_option("--consumer", consumer_,
                "Durable consumer whose position is used (default: the checkpoint's)");
  c->add_option("--timeout-ms", nats_.timeout_ms, "NATS connect timeout and replay deadline")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  shared("--workspace", "workspace-dir", "Workspace to read (default: $WORKSPACE_DIR)");
  shared("--redact-patterns", "redact-patterns",
         "Extra redaction rules for replayed bodies, as the sidecar's ($CKPT_REDACT_PATTERNS)");
  shared("--replay-max", "replay-max", "Messages replayed at most ($CKPT_REPLAY_MAX, default 50)");
  shared("--prompt-max-tokens", "prompt-max-tokens",
         "Prompt size limit ($CKPT_PROMPT_MAX_TOKENS, default 4000)");
  shared("--stale-after-s", "stale-after-s",
         "A checkpoint older than this is stale ($CKPT_STALE_AFTER_S, default 900)");
  shared("--tokenizer", "tokenizer",
         "Encoding the prompt's tokens are counted in: o200k_base or cl100k_base "
         "($CKPT_TOKENIZER, default o200k_base)");
  c->add_flag("--json", json_, "Machine-readable JSON on stdout (the prompt included)");
}

bool RestoreCommand::Selected() const { return command_->parsed(); }

int RestoreCommand::Execute() {
  std::map<std::string, std::string> given;
  for (const auto& [setting, option] : shared_flags_) {
    if (option->count() > 0) given[setting] = shared_values_[setting];
  }
  StatusOr<RestoreSettings> settings = ResolveRestoreSettings(given, ProcessEnvLookup());
  if (!settings.ok()) return ReportSettingError("restore", settings.status());
  const std::string& agent = settings->agent_id;
  if (!dry_run_) {
    std::fprintf(stderr,
                 "agentckpt restore: only --dry-run is supported here. A live restore is the "
                 "sidecar's job: POST /v1/restore on its HTTP API, or a request on %s.\n",
                 subjects::CheckpointRestore(agent.empty() ? "{id}" : agent).c_str());
    return 2;
  }
  if (agent.empty()) {
    return ReportError("restore", InvalidArgumentError("--agent (or $AGENT_ID) is required"));
  }
  const bool use_nats = nats_flag_->count() > 0;
  if (!use_nats && (!stream_.empty() || !consumer_.empty())) {
    return ReportError("restore", InvalidArgumentError("--stream and --consumer need --nats"));
  }
  if (Status t = ParseTokenEncoding(settings->tokenizer).status(); !t.ok()) {
    return ReportError("restore", t.WithContext("--tokenizer"));
  }
  auto store = OpenStoreFromFlags(store_, agent);
  if (!store.ok()) return ReportError("restore", store.status());

  Progress progress;
  NatsConnectionPtr nc;
  if (use_nats) {
    Status ok = CheckNatsClientOptions(nats_);
    if (!ok.ok()) return ReportError("restore", ok);
    progress.Update("restore (dry run): connecting to " + RedactNatsUrl(nats_.nats_url), true);
    auto connected = ConnectNats(nats_, "agentckpt restore --dry-run");
    if (!connected.ok()) {
      progress.Done();
      return ReportError("restore", connected.status());
    }
    nc = std::move(connected).value();
  }
  DryRunRequest request{agent, *settings, nc.get(), nats_.timeout_ms, stream_, consumer_,
                        &progress};
  auto result = RunRestoreDryRun(store->get(), request);
  progress.Done();
  if (!result.ok()) return ReportError("restore", result.status());

  if (json_) {
    std::printf("%s\n", RestoreDryRunJson(agent, *result, use_nats).dump(2).c_str());
  } else {
    PrintHuman(agent, *result, use_nats);
  }
  return 0;
}

}  // namespace agentckpt
