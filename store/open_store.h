// OpenStore with the NATS connection settings a jetstream:// store needs (the sidecar passes
// its own NATS_URL and credentials). The one-argument OpenStore (checkpoint_store.h) takes them
// from the environment: NATS_URL, NATS_CREDS, NATS_NKEY_SEED, NATS_NKEY, NATS_USER,
// NATS_PASSWORD, NATS_TLS_CA, NATS_TLS_CERT and NATS_TLS_KEY.
#pragma once

#include <memory>
#include <string>

#include "nats/nats_options.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

struct StoreConnectOptions {
  std::string nats_url = "nats://127.0.0.1:4222";  // for jetstream:// URLs without hosts
  NatsAuthOptions nats_auth;
  // For sqlite:// URLs: SqliteStoreOptions::presize_wal (the sidecar sets it; a one-shot command
  // does not).
  bool sqlite_presize_wal = false;
};

// The connection settings from the environment variables named above.
StoreConnectOptions StoreConnectOptionsFromEnvironment();

// Opens "sqlite://...", "firestore://..." (when built in) or "jetstream://..." (see
// JetStreamStore::ParseUrl). kInvalidArgument for an unknown scheme or a malformed URL; the
// backend's open errors otherwise.
StatusOr<std::unique_ptr<CheckpointStore>> OpenStore(const std::string& url,
                                                     const StoreConnectOptions& connect);

// For the start log: the HTTP proxy the store at `url` sends its requests through, as
// "http://host:port (https_proxy/HTTPS_PROXY)" (never with credentials), or "" when it connects
// directly or is not an HTTP store. Reads the same environment as OpenStore.
std::string StoreProxyRoute(const std::string& url);

}  // namespace agentckpt
