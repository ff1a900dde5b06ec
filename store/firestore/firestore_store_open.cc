// FirestoreStore: opening (explicit options or a firestore:// URL), document names and Ping.
#include <cerrno>
#include <cstdlib>

#include "common/status_macros.h"
#include "store/firestore/firestore_store.h"

namespace agentckpt {

FirestoreStore::FirestoreStore(FirestoreStoreOptions options, ProxyRoute route)
    : options_(std::move(options)) {
  if (options_.env == nullptr) options_.env = Env::Default();
  FirestoreHttpOptions h;
  h.base_url = options_.endpoint;
  h.proxy = std::move(route);
  h.tokens = options_.tokens.get();
  h.env = options_.env;
  h.request_timeout_ms = options_.request_timeout_ms;
  h.overall_deadline_ms = options_.overall_deadline_ms;
  h.initial_backoff_ms = options_.initial_backoff_ms;
  h.max_backoff_ms = options_.max_backoff_ms;
  h.hedge_after_ms = options_.hedge_after_ms;
  http_ = std::make_unique<FirestoreHttp>(std::move(h));
}

StatusOr<std::unique_ptr<FirestoreStore>> FirestoreStore::Open(FirestoreStoreOptions options) {
  if (options.project_id.empty()) return InvalidArgumentError("Firestore: empty project id");
  if (options.database_id.empty()) options.database_id = "(default)";
  if (options.endpoint.empty()) return InvalidArgumentError("Firestore: empty endpoint");
  if (options.hedge_after_ms < 0) return InvalidArgumentError("Firestore: negative hedge delay");
  auto route = RouteFor(options.endpoint, options.proxy_env);
  if (!route.ok()) return route.status().WithContext("Firestore endpoint " + options.endpoint);
  return std::unique_ptr<FirestoreStore>(
      new FirestoreStore(std::move(options), std::move(route).value()));
}

StatusOr<std::unique_ptr<FirestoreStore>> FirestoreStore::OpenUrl(const std::string& url) {
  const std::string prefix = "firestore://projects/";
  const std::string usage =
      "CKPT_STORE: expected firestore://projects/{project}/databases/{database}, got \"" + url +
      "\"";
  if (url.rfind(prefix, 0) != 0) return InvalidArgumentError(usage);
  std::string rest = url.substr(prefix.size());
  size_t slash = rest.find("/databases/");
  if (slash == std::string::npos || slash == 0) return InvalidArgumentError(usage);
  FirestoreStoreOptions options;
  options.project_id = rest.substr(0, slash);
  options.database_id = rest.substr(slash + std::string("/databases/").size());
  if (options.database_id.empty() || options.database_id.find('/') != std::string::npos ||
      options.project_id.find('/') != std::string::npos) {
    return InvalidArgumentError(usage);
  }
  if (const char* hedge = std::getenv("CKPT_FIRESTORE_HEDGE_MS"); hedge != nullptr && *hedge) {
    char* end = nullptr;
    errno = 0;
    long long ms = std::strtoll(hedge, &end, 10);
    if (errno != 0 || *end != '\0' || ms < 0 || ms > 60'000) {
      return InvalidArgumentError(std::string("CKPT_FIRESTORE_HEDGE_MS: expected milliseconds "
                                              "from 0 (no hedging) to 60000, got \"") +
                                  hedge + "\"");
    }
    options.hedge_after_ms = ms;
  }
  options.proxy_env = ProxyEnvironment::FromProcess();
  options.endpoint = EndpointFromEnvironment();
  const char* emulator = std::getenv("FIRESTORE_EMULATOR_HOST");
  if (emulator == nullptr || *emulator == '\0') {
    ASSIGN_OR_RETURN(options.tokens, MakeDefaultTokenSource(Env::Default()));
  }
  return Open(std::move(options));
}

std::string FirestoreStore::EndpointFromEnvironment() {
  const char* emulator = std::getenv("FIRESTORE_EMULATOR_HOST");
  if (emulator != nullptr && *emulator != '\0') return std::string("http://") + emulator;
  return "https://firestore.googleapis.com";
}

std::string FirestoreStore::DocumentsPath() const {
  return "projects/" + options_.project_id + "/databases/" + options_.database_id + "/documents";
}

std::string FirestoreStore::SnapshotName(const std::string& agent_id,
                                         const std::string& checkpoint_id) const {
  return DocumentsPath() + "/checkpoints/" + agent_id + "/snapshots/" + checkpoint_id;
}

std::string FirestoreStore::AgentName(const std::string& agent_id) const {
  return DocumentsPath() + "/agents/" + agent_id;
}

Status FirestoreStore::Ping() {
  auto doc = GetDocument(DocumentsPath() + "/agents/.ping");
  return doc.status();
}

}  // namespace agentckpt
