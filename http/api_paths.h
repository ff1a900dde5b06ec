// The API's paths (docs/http-api.md) as the router and its metrics see them: which methods a
// path accepts, and the path as a route label with a bounded set of values. Pure functions, no
// state; thread-safe.
#pragma once

#include <string>

namespace agentckpt::api_paths {

inline constexpr char kCheckpointsPrefix[] = "/v1/checkpoints/";
inline constexpr char kToolCallsPrefix[] = "/v1/tool-calls/";

// The methods `path` accepts, as an Allow header value ("GET, POST"); "" for a path no endpoint
// serves. The gate paths (/v1/gates...) are answered, 405s included, by gate_api.h before this
// is asked, so they are not listed here.
std::string AllowedMethods(const std::string& path);

// The path as a template with a bounded set of values ("/v1/checkpoints/{id}"), for the
// metrics' route label; "other" for paths no endpoint serves.
std::string RouteTemplate(const std::string& path);

// `method` when it is a standard HTTP method, else "other" (a bounded metrics label).
std::string MethodLabel(const std::string& method);

}  // namespace agentckpt::api_paths
