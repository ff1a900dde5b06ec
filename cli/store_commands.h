// Store subcommands of the agentckpt CLI, working directly on a store (the sidecar may be
// running on the same SQLite file: readers do not block it):
//   agentckpt list   --agent ID [--limit N] [--json]      newest first
//   agentckpt show   ID|latest --agent ID [--json]        one checkpoint, verified
//   agentckpt verify --agent ID [--json]                  every checkpoint; exit 1 on corruption
//   agentckpt prune  --agent ID --keep N                  delete all but the newest N
//   agentckpt status --agent ID [--json]                  the agent's status record
// Every subcommand takes --store URL (default: $CKPT_STORE, else the sidecar's default path).
// Exit codes: 0 ok, 1 corruption found / not found, 2 bad arguments, 3 store unavailable.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace agentckpt {

class StoreCommands {
 public:
  // Adds the subcommands to `app`.
  explicit StoreCommands(CLI::App* app);
  // True if one of them was selected; then Execute() runs it.
  bool Selected() const;
  int Execute();

 private:
  struct Options {
    std::string store;
    std::string agent;
    std::string which;
    int limit = 20;
    int keep = 48;
    bool json = false;
  };
  int List();
  int Show();
  int Verify();
  int Prune();
  int Status();
  CLI::App* list_;
  CLI::App* show_;
  CLI::App* verify_;
  CLI::App* prune_;
  CLI::App* status_;
  Options o_;
};

// Human forms for terminal output: "15.2 KB", "3 min ago".
std::string HumanSize(int64_t bytes);
std::string HumanAge(int64_t age_ms);

}  // namespace agentckpt
