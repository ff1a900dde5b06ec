// ConsoleApi: the web console's HTTP handler (docs/console.md), served by http/http_server.h.
// GET / and /assets/* answer the page and its scripts, embedded in the binary
// (console_assets.h); /api/* answers JSON: the read-only views (console_views.h), the restore
// preview (the `restore --dry-run` code path, cli/restore_dry_run.h) and the gates, whose
// decisions take the path of `agentckpt gate approve|reject` (cli/gate_resolve.h). It changes
// nothing else. With a bearer token configured, every /api/ request needs it (401 JSON
// otherwise); the page and its assets do not (they hold no data). Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "cli/nats_client.h"
#include "console/fleet_cache.h"
#include "http/http_handler.h"
#include "sidecar/config.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

struct ConsoleOptions {
  std::string bearer_token;  // empty: no token required
  // NATS for gate decisions (always tried first, as `agentckpt gate approve` does) and, when
  // `replay` is set, for the restore preview's replay (as `restore --dry-run --nats`).
  NatsClientOptions nats;
  bool replay = false;
  RestoreSettings restore;  // the preview's settings (the environment's, as `restore` reads)
  // The store a gate decision writes to when no sidecar answers (the console's own store).
  std::function<StatusOr<CheckpointStore*>()> decision_store;
  // How long a fleet row may be reused while its agent shows no change (console/fleet_cache.h);
  // 0 computes every row on every request.
  int64_t fleet_row_max_age_ms = 30000;
};

class ConsoleApi : public HttpHandler {
 public:
  // `store` is borrowed and must outlive the handler.
  ConsoleApi(CheckpointStore* store, ConsoleOptions options);

  ApiResponse Handle(const ApiRequest& request) override;
  bool Authorized(const ApiRequest& request) const override;

 private:
  ApiResponse Route(const ApiRequest& request);
  ApiResponse Agent(const ApiRequest& request, const std::string& agent, const std::string& rest);
  ApiResponse Preview(const std::string& agent);
  ApiResponse Gates(const std::string& agent);
  ApiResponse Decide(const ApiRequest& request, const std::string& agent,
                     const std::string& gate_id);

  CheckpointStore* store_;
  ConsoleOptions options_;
  BearerAuth auth_;
  FleetCache fleet_;
};

}  // namespace agentckpt
