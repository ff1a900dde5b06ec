#include "store/open_store.h"

#include <cstdlib>
#include <string>

#include "store/checkpoint_store.h"
#include "store/jetstream/jetstream_store.h"
#include "store/sqlite/sqlite_store.h"
#if AGENTCKPT_WITH_FIRESTORE
#include "store/firestore/firestore_store.h"
#endif

namespace agentckpt {
namespace {

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace

StoreConnectOptions StoreConnectOptionsFromEnvironment() {
  StoreConnectOptions o;
  if (std::string url = Getenv("NATS_URL"); !url.empty()) o.nats_url = url;
  o.nats_auth.creds_file = Getenv("NATS_CREDS");
  o.nats_auth.nkey_seed_file = Getenv("NATS_NKEY_SEED");
  o.nats_auth.nkey_public = Getenv("NATS_NKEY");
  o.nats_auth.user = Getenv("NATS_USER");
  o.nats_auth.password = Getenv("NATS_PASSWORD");
  o.nats_auth.tls_ca_file = Getenv("NATS_TLS_CA");
  o.nats_auth.tls_cert_file = Getenv("NATS_TLS_CERT");
  o.nats_auth.tls_key_file = Getenv("NATS_TLS_KEY");
  return o;
}

StatusOr<std::unique_ptr<CheckpointStore>> OpenStore(const std::string& url) {
  return OpenStore(url, StoreConnectOptionsFromEnvironment());
}

StatusOr<std::unique_ptr<CheckpointStore>> OpenStore(const std::string& url,
                                                     const StoreConnectOptions& connect) {
  const std::string sqlite_prefix = "sqlite://";
  if (url.rfind(sqlite_prefix, 0) == 0) {
    std::string path = url.substr(sqlite_prefix.size());
    if (path.empty()) return InvalidArgumentError("CKPT_STORE: sqlite:// needs a file path");
    SqliteStoreOptions options;
    options.presize_wal = connect.sqlite_presize_wal;
    auto store = SqliteStore::Open(path, options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<CheckpointStore>(std::move(store).value());
  }
  if (url.rfind("jetstream://", 0) == 0) {
    auto options = JetStreamStore::ParseUrl(url, connect.nats_url, connect.nats_auth);
    if (!options.ok()) return options.status();
    auto store = JetStreamStore::Open(std::move(options).value());
    if (!store.ok()) return store.status();
    return std::unique_ptr<CheckpointStore>(std::move(store).value());
  }
  if (url.rfind("firestore://", 0) == 0) {
#if AGENTCKPT_WITH_FIRESTORE
    auto store = FirestoreStore::OpenUrl(url);
    if (!store.ok()) return store.status();
    return std::unique_ptr<CheckpointStore>(std::move(store).value());
#else
    return InvalidArgumentError(
        "CKPT_STORE: this agentckpt is built without the Firestore backend "
        "(AGENTCKPT_WITH_FIRESTORE=OFF)");
#endif
  }
  return InvalidArgumentError("CKPT_STORE: unknown store URL \"" + url +
                              "\" (expected sqlite:///path/to/file.db, "
                              "firestore://projects/P/databases/D or "
                              "jetstream://host:port,.../PREFIX)");
}

std::string StoreProxyRoute(const std::string& url) {
#if AGENTCKPT_WITH_FIRESTORE
  if (url.rfind("firestore://", 0) != 0) return "";
  auto route = RouteFor(FirestoreStore::EndpointFromEnvironment(), ProxyEnvironment::FromProcess());
  if (!route.ok() || route->direct()) return "";
  return route->proxy_url + " (" + route->variable + ")";
#else
  (void)url;
  return "";
#endif
}

}  // namespace agentckpt
