// The `restore --dry-run` code path, shared by `agentckpt restore --dry-run` and the web
// console's restore preview (console/): runs the restore phases (load, replay, workspace, prompt)
// with RestoreOptions::dry_run, so it publishes nothing, stashes nothing, writes nothing to the
// store and leaves the durable consumer as it was (the replay reads through a short-lived
// ephemeral consumer, replay/jetstream_replay.h).
#pragma once

#include <nats/nats.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/terminal_output.h"
#include "common/status.h"
#include "restore/restorer.h"
#include "sidecar/config.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

struct DryRunRequest {
  std::string agent_id;
  RestoreSettings settings;  // as ResolveRestoreSettings resolved them (agent_id not used)
  // The NATS connection the replay reads through; null: no replay ("no --nats given").
  natsConnection* nats = nullptr;
  int timeout_ms = 5000;  // the replay's deadline
  std::string stream;     // read this stream instead of the checkpoint's ("" keeps it)
  std::string consumer;   // use this consumer's position instead of the checkpoint's
  Progress* progress = nullptr;  // shows the phases when set
};

// Runs the dry restore of `r.agent_id` against `store` (borrowed). kInvalidArgument for a bad
// tokenizer or an unreadable redact-patterns file (naming the flag), else as Restorer::Run.
// Thread-safe when `store` is; each call builds its own restorer.
StatusOr<RestoreResult> RunRestoreDryRun(CheckpointStore* store, const DryRunRequest& r);

// The --json document of `restore --dry-run`: the checkpoint.restored payload plus agentId,
// dryRun, replayConfigured and prompt.
nlohmann::json RestoreDryRunJson(const std::string& agent_id, const RestoreResult& result,
                                 bool replay_configured);

}  // namespace agentckpt
