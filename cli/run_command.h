// The `agentckpt run` subcommand: flags for every setting (sidecar/config.h), then the daemon
// until SIGTERM or SIGINT.
//
// Exit codes: 0 after a clean shutdown with its pre_shutdown checkpoint written; 1 when the
// sidecar fails at run time (store unusable, the pre_shutdown checkpoint failed, shutdown over
// its 5 s budget); 2 for a bad setting (the message names it).
#pragma once

#include <signal.h>

#include <map>
#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace agentckpt {

class RunCommand {
 public:
  // Adds the `run` subcommand and its flags to `app`.
  explicit RunCommand(CLI::App* app);
  // True if `run` was given on the command line.
  bool Selected() const;
  // Resolves the configuration and runs the sidecar; returns the process exit code.
  int Execute();

 private:
  CLI::App* sub_;
  std::map<std::string, std::string> values_;
};

// Blocks SIGTERM and SIGINT in the calling thread (every thread started afterwards inherits the
// mask, so only a sigwait on the returned set takes them) and ignores SIGPIPE. For the
// long-running subcommands (`run`, `console`); call before starting any thread.
sigset_t BlockStopSignals();

// Runs the sidecar with flags `flags` (flag name -> value) over the process environment.
int RunSidecarMain(const std::map<std::string, std::string>& flags);

}  // namespace agentckpt
