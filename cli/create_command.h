// `agentckpt create`: asks an agent's sidecar for a checkpoint over NATS and waits for the
// outcome.
//
//   agentckpt create --agent ID --trigger manual [--task-id T] [--nats URL] [NATS auth flags]
//                    [--timeout S] [--json]
//
// It subscribes to agent.{ID}.checkpoint.created and agent.{ID}.checkpoint.failed, then sends
// {"trigger": T, "taskId": ID} on agent.{ID}.checkpoint.create with a reply inbox. The sidecar
// answers the request itself (the checkpoint.created payload, or {"error": {code, message}}):
// that answer decides, and the created event with the same checkpointId is awaited briefly to
// confirm it was announced. A sidecar that does not answer requests is matched by the first
// created/failed event of the same trigger.
//
// Exit codes: 0 created (prints id, sequence, size, duration), 1 failed (prints the reason),
// 2 bad arguments, 3 timeout, no sidecar listening, or NATS unavailable.
#pragma once

#include <string>

#include "cli/nats_client.h"

namespace CLI {
class App;
}

namespace agentckpt {

class CreateCommand {
 public:
  // Adds the `create` subcommand to `app`; defaults are read from the environment now.
  explicit CreateCommand(CLI::App* app);
  // True if `create` was selected; then Execute() runs it and returns the exit code.
  bool Selected() const;
  int Execute();

 private:
  CLI::App* command_;
  std::string agent_;
  std::string trigger_ = "manual";
  std::string task_id_;
  NatsClientOptions nats_;
  double timeout_s_ = 30;
  bool json_ = false;
};

}  // namespace agentckpt
