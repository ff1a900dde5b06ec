// Store subcommands of the agentckpt CLI, working directly on a store (the sidecar may be
// running on the same SQLite file: readers do not block it):
//   agentckpt list   --agent ID [--limit N] [--json]      newest first
//   agentckpt show   ID|SEQ|latest --agent ID [--json]    one checkpoint, verified
//   agentckpt verify --agent ID [--json]                  every checkpoint; exit 1 on corruption
//   agentckpt prune  --agent ID --keep N [--json]         delete all but the newest N
//   agentckpt status --agent ID [--json]                  the agent's status record
// Every subcommand takes the store flags of cli/store_flags.h (--store URL). verify and prune
// show progress on stderr when it is a terminal.
// Exit codes: 0 ok, 1 corruption found / not found, 2 bad arguments, 3 store unavailable.
#pragma once

#include <string>

#include "cli/store_flags.h"

namespace CLI {
class App;
}

namespace agentckpt {

class StoreCommands {
 public:
  // Adds the subcommands to `app`.
  explicit StoreCommands(CLI::App* app);
  // True if one of them was selected; then Execute() runs it and returns the exit code.
  bool Selected() const;
  int Execute();

 private:
  struct Options {
    StoreFlags store;
    std::string agent;
    std::string which;
    int limit = 20;
    int keep = 48;
    bool json = false;
  };
  int List(CheckpointStore* store);
  int Show(CheckpointStore* store);
  int Verify(CheckpointStore* store);
  int Prune(CheckpointStore* store);
  int Status(CheckpointStore* store);
  // The name of the selected subcommand, for messages.
  std::string Name() const;
  CLI::App* list_;
  CLI::App* show_;
  CLI::App* verify_;
  CLI::App* prune_;
  CLI::App* status_;
  Options o_;
};

}  // namespace agentckpt
