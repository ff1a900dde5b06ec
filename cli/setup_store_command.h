// `agentckpt setup-store`: provisions what a store needs before the first sidecar uses it.
// For jetstream:// it creates the store's three streams (docs/jetstream-store.md) with
// --replicas copies each (default 3), or checks that they exist with the right subjects; run
// again, it changes nothing. It connects with the NATS settings the sidecar uses (NATS_URL,
// NATS_CREDS, ... or the --nats flags). Prints one line per stream, or a JSON object with --json.
// Exit codes: 0 ok, 2 bad arguments (or a store URL that needs no set-up), 3 NATS unavailable or
// a stream that exists with other settings.
#pragma once

#include <string>

#include "cli/nats_client.h"

namespace CLI {
class App;
}

namespace agentckpt {

class SetupStoreCommand {
 public:
  explicit SetupStoreCommand(CLI::App* app);
  bool Selected() const;
  int Execute();

 private:
  CLI::App* command_ = nullptr;
  NatsClientOptions nats_;
  std::string store_url_;
  int replicas_ = 3;
  bool json_ = false;
};

}  // namespace agentckpt
