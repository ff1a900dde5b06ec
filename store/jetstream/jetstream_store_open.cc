// JetStreamStore: opening (the jetstream:// URL, the streams it needs, the connection) and Ping.
#include <algorithm>
#include <cctype>

#include "common/status_macros.h"
#include "store/jetstream/jetstream_store.h"

namespace agentckpt {
namespace {

bool ValidPrefix(const std::string& p) {
  if (p.empty() || p.size() > 32) return false;
  return std::all_of(p.begin(), p.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-'; });
}

StatusOr<int64_t> ParseIntParam(const std::string& key, const std::string& value, int64_t lo,
                                int64_t hi) {
  if (value.empty() || value.size() > 12 ||
      !std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return InvalidArgumentError("CKPT_STORE: jetstream:// " + key + " must be a number, got \"" +
                                value + "\"");
  }
  int64_t v = std::stoll(value);
  if (v < lo || v > hi) {
    return InvalidArgumentError("CKPT_STORE: jetstream:// " + key + " must be " +
                                std::to_string(lo) + "-" + std::to_string(hi));
  }
  return v;
}

}  // namespace

JetStreamStore::JetStreamStore(JetStreamStoreOptions options, std::unique_ptr<JetStreamApi> api)
    : prefix_(options.prefix), api_(std::move(api)) {}

std::vector<JsStreamSpec> JetStreamStore::StreamSpecs(const JetStreamStoreOptions& o) {
  const std::string& p = o.prefix;
  return {
      JsStreamSpec{p + "_AGENTS", {p + ".agents.*"}, o.replicas, 1, -1},
      JsStreamSpec{p + "_CKPT", {p + ".ckpt.*.*.*"}, o.replicas, 1, -1},
      JsStreamSpec{p + "_JOURNAL", {p + ".journal.*"}, o.replicas, -1, -1},
  };
}

StatusOr<std::unique_ptr<JetStreamStore>> JetStreamStore::Open(JetStreamStoreOptions options) {
  if (!ValidPrefix(options.prefix)) {
    return InvalidArgumentError("CKPT_STORE: jetstream:// prefix \"" + options.prefix +
                                "\" must be 1-32 letters, digits, '_' or '-'");
  }
  if (options.replicas < 1 || options.replicas > 5) {
    return InvalidArgumentError("CKPT_STORE: jetstream:// replicas must be 1-5");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<JetStreamApi> api, JetStreamApi::Connect(options.api));
  for (const JsStreamSpec& spec : StreamSpecs(options)) {
    RETURN_IF_ERROR(api->EnsureStream(spec, options.create));
  }
  return std::unique_ptr<JetStreamStore>(new JetStreamStore(std::move(options), std::move(api)));
}

StatusOr<JetStreamStoreOptions> JetStreamStore::ParseUrl(const std::string& url,
                                                         const std::string& default_servers,
                                                         const NatsAuthOptions& auth) {
  const std::string scheme = "jetstream://";
  if (url.rfind(scheme, 0) != 0) return InvalidArgumentError("CKPT_STORE: not a jetstream:// URL");
  std::string rest = url.substr(scheme.size());
  std::string query;
  if (size_t q = rest.find('?'); q != std::string::npos) {
    query = rest.substr(q + 1);
    rest.resize(q);
  }
  std::string hosts = rest, path;
  if (size_t slash = rest.find('/'); slash != std::string::npos) {
    hosts = rest.substr(0, slash);
    path = rest.substr(slash + 1);
  }
  JetStreamStoreOptions o;
  o.api.auth = auth;
  if (hosts.empty()) {
    o.api.servers = default_servers;
  } else {
    size_t start = 0;
    while (start <= hosts.size()) {
      size_t comma = hosts.find(',', start);
      std::string host =
          hosts.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (host.empty() || host.find('@') != std::string::npos) {
        return InvalidArgumentError(
            "CKPT_STORE: jetstream:// hosts are host:port[,host:port...] "
            "(credentials go in NATS_CREDS, NATS_USER, ...)");
      }
      if (!o.api.servers.empty()) o.api.servers += ",";
      o.api.servers += "nats://" + host;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (o.api.servers.empty()) {
    return InvalidArgumentError("CKPT_STORE: jetstream:// names no server and NATS_URL is empty");
  }
  if (!path.empty()) o.prefix = path;
  if (!ValidPrefix(o.prefix)) {
    return InvalidArgumentError("CKPT_STORE: jetstream:// prefix \"" + o.prefix +
                                "\" must be 1-32 letters, digits, '_' or '-'");
  }
  size_t start = 0;
  while (!query.empty() && start <= query.size()) {
    size_t amp = query.find('&', start);
    std::string pair =
        query.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
    size_t eq = pair.find('=');
    std::string key = pair.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : pair.substr(eq + 1);
    if (key == "replicas") {
      ASSIGN_OR_RETURN(int64_t v, ParseIntParam(key, value, 1, 5));
      o.replicas = static_cast<int>(v);
    } else if (key == "create") {
      if (value != "0" && value != "1") {
        return InvalidArgumentError("CKPT_STORE: jetstream:// create must be 0 or 1");
      }
      o.create = value == "1";
    } else if (key == "timeout_ms") {
      ASSIGN_OR_RETURN(o.api.request_timeout_ms, ParseIntParam(key, value, 100, 60000));
    } else if (key == "retry_ms") {
      ASSIGN_OR_RETURN(o.api.retry_ms, ParseIntParam(key, value, 0, 300000));
    } else {
      return InvalidArgumentError("CKPT_STORE: jetstream:// unknown option \"" + key +
                                  "\" (replicas, create, timeout_ms, retry_ms)");
    }
    if (amp == std::string::npos) break;
    start = amp + 1;
  }
  return o;
}

Status JetStreamStore::Ping() { return api_->StreamPlacement(AgentsStream()).status(); }

}  // namespace agentckpt
