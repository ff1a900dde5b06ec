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

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli/nats_client.h"
#include "cli/store_flags.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace agentckpt {

class RestoreCommand {
 public:
  // Adds the `restore` subcommand to `app`. The settings it shares with `agentckpt run` are
  // read from the flags and the environment by Execute, with run's checks and messages.
  explicit RestoreCommand(CLI::App* app);
  // True if `restore` was selected; then Execute() runs it and returns the exit code.
  bool Selected() const;
  int Execute();

 private:
  CLI::App* command_;
  CLI::Option* nats_flag_;
  // The settings shared with `agentckpt run` (named as in sidecar/config.h SettingSpecs): their
  // options and the values given.
  std::vector<std::pair<std::string, CLI::Option*>> shared_flags_;
  std::map<std::string, std::string> shared_values_;
  StoreFlags store_;
  NatsClientOptions nats_;
  std::string stream_;
  std::string consumer_;
  bool dry_run_ = false;
  bool json_ = false;
};

}  // namespace agentckpt
