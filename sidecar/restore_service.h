// RestoreService: the sidecar's restore entry points (start, POST /v1/restore, GET
// /v1/restoration, agent.{id}.checkpoint.restore) on top of the Restorer, with JetStream replay
// over the sidecar's NATS connection. Keeps the last result. Thread-safe (the Restorer
// serialises runs).
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/env.h"
#include "nats/nats_link.h"
#include "observability/metrics.h"
#include "redact/redactor.h"
#include "replay/jetstream_replay.h"
#include "restore/restorer.h"
#include "sidecar/config.h"
#include "sidecar/nats_restore_events.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

class RestoreService {
 public:
  // Pointers are borrowed and must outlive the service.
  // `redactor` (may be null) removes secrets from replayed bodies and checkpoint text before
  // they enter the prompt, and from the restore events and results.
  RestoreService(Env* env, CheckpointStore* store, NatsLink* link, const SidecarConfig& config,
                 const Redactor* redactor = nullptr);

  // Runs a restore (on `preloaded` when given: see Restorer::Run) that leaves the agent's working
  // tree untouched (the start-up restore, POST /v1/restore, checkpoint.restore); on success
  // returns the result JSON (the checkpoint.restored metadata plus "prompt") and keeps it for
  // Last(). Errors as Restorer::Run.
  StatusOr<nlohmann::json> Run(PreloadedLatest* preloaded = nullptr);
  // The agent's own start (POST /v1/agent-start): as Run, but uncommitted changes the checkpoint
  // does not account for are stashed under the checkpoint's name (WorkspaceAction).
  StatusOr<nlohmann::json> RunForAgentStart();
  // The last successful result's JSON; kNotFound when no restore has completed.
  StatusOr<nlohmann::json> Last() const;
  // Where restore durations and failures are counted (may stay null).
  void set_metrics(Metrics* metrics) { metrics_ = metrics; }
  // The checkpoint the last restore used, if any, to seed the context.
  std::optional<std::string> last_checkpoint_id() const;

 private:
  StatusOr<nlohmann::json> RunWith(PreloadedLatest* preloaded, WorkspaceAction workspace);

  Env* env_;
  std::string agent_id_;
  Metrics* metrics_ = nullptr;
  std::unique_ptr<JetStreamReplaySource> replay_;
  NatsRestoreEvents events_;
  const Redactor* redactor_;
  Restorer restorer_;
  mutable std::mutex mu_;
  std::optional<nlohmann::json> last_;
  std::optional<std::string> last_checkpoint_id_;
};

}  // namespace agentckpt
