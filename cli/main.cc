// agentckpt: the command-line entry point. Each subcommand lives in its own part: `run` is the
// sidecar daemon (sidecar/run_command.h), `setup-stream` creates an agent's JetStream inbox
// (cli/setup_stream.h), and list/show/verify/prune/status work on a store
// (cli/store_commands.h).
#include <CLI/CLI.hpp>

#include "cli/setup_stream.h"
#include "cli/store_commands.h"
#include "sidecar/run_command.h"

int main(int argc, char** argv) {
  CLI::App app{"agentckpt: agent context checkpointing sidecar"};
  app.require_subcommand(1);
  agentckpt::RunCommand run(&app);
  agentckpt::SetupStreamCommand setup_stream(&app);
  agentckpt::StoreCommands store_commands(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (run.Selected()) return run.Execute();
  if (setup_stream.Selected()) return setup_stream.Execute();
  if (store_commands.Selected()) return store_commands.Execute();
  return 2;
}
