// `agentckpt gate`: the agent's approval gates (docs/gates.md, docs/cli.md).
//   agentckpt gate list    --agent ID [--state S] [--json]   the gates, oldest first
//   agentckpt gate show    GATE --agent ID [--json]          one gate
//   agentckpt gate approve GATE --agent ID --by NAME [--args-sha256 H] [--response JSON] [--json]
//   agentckpt gate reject  GATE --agent ID --by NAME [--response JSON] [--json]
// list and show read the store (the latest verified checkpoint plus the journal), so they work
// with the sidecar up or down. approve and reject send agent.{id}.gate.resolve to the running
// sidecar; when no sidecar answers (NATS down, or no responder), they write the decision to the
// store under the writer lease (cli/gate_store.h), which the sidecar folds in at its next start.
// Exit codes: 0 ok, 1 refused (conflict, args mismatch, not found), 2 bad arguments, 3 store or
// NATS unavailable / a sidecar holds the lease but did not answer.
#pragma once

#include <string>

#include "cli/nats_client.h"
#include "cli/store_flags.h"

namespace CLI {
class App;
}

namespace agentckpt {

class GateCommand {
 public:
  // Adds `gate` and its subcommands to `app`.
  explicit GateCommand(CLI::App* app);
  // True if `gate` was selected; then Execute() runs it and returns the exit code.
  bool Selected() const;
  int Execute();

 private:
  int List();
  int Show();
  int Resolve(bool approve);

  CLI::App* gate_ = nullptr;
  CLI::App* list_ = nullptr;
  CLI::App* show_ = nullptr;
  CLI::App* approve_ = nullptr;
  CLI::App* reject_ = nullptr;
  StoreFlags store_;
  NatsClientOptions nats_;
  std::string agent_;
  std::string gate_id_;
  std::string state_;
  std::string by_;
  std::string args_sha256_;
  std::string response_;
  bool json_ = false;
};

}  // namespace agentckpt
