// `agentckpt diff A B --agent ID [--store URL] [--json]`: the difference between two checkpoints
// of an agent (each "latest", a sequence number or a checkpoint id), with the web console's diff
// code (console/checkpoint_diff.h): task phase and progress, plan items added and removed, new
// tool calls, the draft's line diff and the change in lastAckedSequence. --json prints the
// document GET /api/agents/{id}/diff answers. Exit codes: 0 shown, 1 not found or corrupted, 2
// bad arguments, 3 store unavailable.
#pragma once

#include <string>

#include "cli/store_flags.h"

namespace CLI {
class App;
}

namespace agentckpt {

class DiffCommand {
 public:
  // Adds the `diff` subcommand to `app`.
  explicit DiffCommand(CLI::App* app);
  // True if `diff` was selected; then Execute() runs it and returns the exit code.
  bool Selected() const;
  int Execute();

 private:
  CLI::App* command_;
  StoreFlags store_;
  std::string agent_;
  std::string from_;
  std::string to_;
  bool json_ = false;
};

}  // namespace agentckpt
