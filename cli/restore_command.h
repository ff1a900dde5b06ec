// `agentckpt restore --dry-run`: runs the restore phases (load, replay, workspace, prompt) for an
// agent against its store and, when --nats is given, its JetStream inbox, and prints the
// restoration prompt with the phase timings, the checkpoint used, the corrupted checkpoints
// skipped, the replay counts and the prompt's size in tokens.
//
//   agentckpt restore --agent ID --dry-run [--store URL] [--nats URL [--stream S]
//                     [--consumer C] [NATS auth flags]] [--workspace DIR] [--replay-max N]
//                     [--prompt-max-tokens N] [--tokenizer ENC] [--stale-after-s S]
//                     [--redact-patterns F] [--json]
//
// A dry run publishes nothing, stashes nothing, writes nothing to the store, and leaves the
// agent's durable consumer exactly as it was (the replay reads through a short-lived ephemeral
// consumer, see replay/jetstream_replay.h). Replayed bodies are redacted as the sidecar redacts
// them (built-in rules plus --redact-patterns), so the prompt is the one it would build. Without
// --dry-run the command refuses (a live restore is the sidecar's: POST /v1/restore or
// agent.{id}.checkpoint.restore).
//
// Exit codes: 0 the prompt was built (also for a cold start, and when the replay could not run:
// the output says why), 1 the store could not be read for another reason, 2 bad arguments or no
// --dry-run, 3 the store or NATS is unavailable.
#pragma once

#include <string>

#include "cli/nats_client.h"
#include "cli/store_flags.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace agentckpt {

class RestoreCommand {
 public:
  // Adds the `restore` subcommand to `app`; defaults are read from the environment now.
  explicit RestoreCommand(CLI::App* app);
  // True if `restore` was selected; then Execute() runs it and returns the exit code.
  bool Selected() const;
  int Execute();

 private:
  CLI::App* command_;
  CLI::Option* nats_flag_;
  std::string agent_;
  StoreFlags store_;
  NatsClientOptions nats_;
  std::string stream_;
  std::string consumer_;
  std::string workspace_;
  std::string redact_patterns_;
  int replay_max_ = 50;
  int prompt_max_tokens_ = 4000;
  std::string tokenizer_ = "o200k_base";
  int64_t stale_after_s_ = 900;
  bool dry_run_ = false;
  bool json_ = false;
};

}  // namespace agentckpt
