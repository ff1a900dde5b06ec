// `agentckpt console`: serves the web console (docs/console.md) until SIGTERM or SIGINT.
//
//   agentckpt console --store URL [--nats URL [NATS auth flags]] [--listen 127.0.0.1:8788]
//                     [--http-token-file FILE] [--timeout-ms MS] [--fleet-cache-ms MS]
//
// Read-only apart from gate decisions. Listens on loopback unless --listen says otherwise (port
// 0 picks a free port); prints "console listening on http://HOST:PORT/" on stdout once it
// serves. With --http-token-file (default $CKPT_HTTP_TOKEN_FILE, the sidecar's setting) every
// /api/ request needs "Authorization: Bearer <token>". The restore preview takes the settings
// `restore --dry-run` takes from the environment (CKPT_REPLAY_MAX, CKPT_PROMPT_MAX_TOKENS,
// CKPT_TOKENIZER, CKPT_STALE_AFTER_S, WORKSPACE_DIR, CKPT_REDACT_PATTERNS) and replays only with
// --nats. Exit codes: 0 after SIGTERM/SIGINT, 2 bad arguments, 3 store or address unavailable.
#pragma once

#include <cstdint>
#include <string>

#include "cli/nats_client.h"
#include "cli/store_flags.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace agentckpt {

class ConsoleCommand {
 public:
  // Adds the `console` subcommand to `app`.
  explicit ConsoleCommand(CLI::App* app);
  // True if `console` was selected; then Execute() serves until a signal and returns the exit
  // code.
  bool Selected() const;
  int Execute();

 private:
  CLI::App* command_;
  CLI::Option* nats_flag_;
  StoreFlags store_;
  NatsClientOptions nats_;
  std::string listen_ = "127.0.0.1:8788";
  std::string token_file_;
  int64_t fleet_row_max_age_ms_ = 30000;
};

}  // namespace agentckpt
