// The API's paths: which methods each accepts and the bounded route label of each (api_paths.h).
#include "http/api_paths.h"

#include <optional>
#include <string_view>
#include <utility>

namespace agentckpt::api_paths {

namespace {

// /v1/tool-calls/begin and /v1/tool-calls/{callId}/end|reconcile accept POST.
std::string ToolCallPathMethods(const std::string& path) {
  std::string rest = path.substr(sizeof(kToolCallsPrefix) - 1);
  if (rest == "begin") return "POST";
  size_t slash = rest.find('/');
  if (slash == 0 || slash == std::string::npos) return "";
  std::string action = rest.substr(slash + 1);
  return action == "end" || action == "reconcile" ? "POST" : "";
}

}  // namespace

std::string AllowedMethods(const std::string& path) {
  if (path == "/healthz" || path == "/readyz" || path == "/metrics" || path == "/v1/restoration") {
    return "GET";
  }
  if (path == "/v1/context") return "GET, PUT, PATCH";
  if (path == "/v1/restore" || path == "/v1/agent-start") return "POST";
  if (path == "/v1/tool-calls") return "GET, POST";
  if (path.rfind(kToolCallsPrefix, 0) == 0) return ToolCallPathMethods(path);
  if (path == "/v1/checkpoints") return "GET, POST";
  if (path.rfind(kCheckpointsPrefix, 0) == 0 && path.size() > sizeof(kCheckpointsPrefix) - 1 &&
      path.find('/', sizeof(kCheckpointsPrefix) - 1) == std::string::npos) {
    return "GET";
  }
  return "";
}

std::string RouteTemplate(const std::string& path) {
  static const char* const kFixed[] = {"/healthz",
                                       "/readyz",
                                       "/metrics",
                                       "/v1/restoration",
                                       "/v1/context",
                                       "/v1/restore",
                                       "/v1/agent-start",
                                       "/v1/gates",
                                       "/v1/tool-calls",
                                       "/v1/checkpoints",
                                       "/v1/tool-calls/begin"};
  for (const char* fixed : kFixed) {
    if (path == fixed) return fixed;
  }
  auto segments_after = [&path](std::string_view prefix) -> std::optional<std::string> {
    if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) {
      return std::nullopt;
    }
    return path.substr(prefix.size());
  };
  if (auto rest = segments_after(kCheckpointsPrefix)) {
    return rest->find('/') == std::string::npos ? "/v1/checkpoints/{id}" : "other";
  }
  for (auto [prefix, templ] :
       {std::pair<std::string_view, std::string>{kToolCallsPrefix, "/v1/tool-calls/{callId}"},
        {"/v1/gates/", "/v1/gates/{gateId}"}}) {
    auto rest = segments_after(prefix);
    if (!rest) continue;
    size_t slash = rest->find('/');
    if (slash == 0) return "other";
    if (slash == std::string::npos) return templ;
    std::string action = rest->substr(slash + 1);
    for (const char* known : {"end", "reconcile", "resolve", "consume"}) {
      if (action == known) return templ + "/" + action;
    }
    return "other";
  }
  return "other";
}

std::string MethodLabel(const std::string& method) {
  for (const char* known : {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}) {
    if (method == known) return method;
  }
  return "other";
}

}  // namespace agentckpt::api_paths
