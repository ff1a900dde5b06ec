// agentckpt: the command-line entry point. Each subcommand lives in its own part: `run` is the
// sidecar daemon (cli/run_command.h), `setup-stream` creates an agent's JetStream inbox
// (cli/setup_stream.h), `setup-store` the streams of a jetstream:// store
// (cli/setup_store_command.h), list/show/verify/prune/status work on a store
// (cli/store_commands.h), `restore --dry-run` previews a restoration (cli/restore_command.h)
// `create` asks a running sidecar for a checkpoint (cli/create_command.h), `gate` lists and
// decides approval gates (cli/gate_command.h), `console` serves the web console and `diff`
// compares two checkpoints (console/). docs/cli.md documents them all.
#include <CLI/CLI.hpp>

#include "cli/create_command.h"
#include "cli/gate_command.h"
#include "cli/restore_command.h"
#include "cli/run_command.h"
#include "cli/setup_store_command.h"
#include "cli/setup_stream.h"
#include "cli/store_commands.h"
#include "console/console_command.h"
#include "console/diff_command.h"

int main(int argc, char** argv) {
  CLI::App app{"agentckpt: agent context checkpointing sidecar"};
  app.require_subcommand(1);
  agentckpt::RunCommand run(&app);
  agentckpt::SetupStreamCommand setup_stream(&app);
  agentckpt::SetupStoreCommand setup_store(&app);
  agentckpt::StoreCommands store_commands(&app);
  agentckpt::RestoreCommand restore(&app);
  agentckpt::CreateCommand create(&app);
  agentckpt::GateCommand gate(&app);
  agentckpt::ConsoleCommand console(&app);
  agentckpt::DiffCommand diff(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (run.Selected()) return run.Execute();
  if (setup_stream.Selected()) return setup_stream.Execute();
  if (setup_store.Selected()) return setup_store.Execute();
  if (store_commands.Selected()) return store_commands.Execute();
  if (restore.Selected()) return restore.Execute();
  if (create.Selected()) return create.Execute();
  if (gate.Selected()) return gate.Execute();
  if (console.Selected()) return console.Execute();
  if (diff.Selected()) return diff.Execute();
  return 2;
}
