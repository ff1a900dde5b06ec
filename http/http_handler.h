// What the HTTP server (http_server.h) serves: a request in, a response out. The sidecar's API
// router (api_router.h) and the web console (console/) are handlers; the server knows only this
// interface. BearerAuth is the one bearer-token check both use (CKPT_HTTP_TOKEN_FILE).
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace agentckpt {

struct ApiRequest {
  std::string method;  // "GET", "PUT", ...
  std::string path;    // "/v1/checkpoints/abc", without the query
  std::map<std::string, std::string> query;
  std::string body;
  std::string authorization;  // the Authorization header, "" when absent
  // The W3C traceparent header, "" when absent. When tracing is on and it parses, the request's
  // span is its child; otherwise it is ignored (never an error).
  std::string traceparent;
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::map<std::string, std::string> headers;
};

class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  // Answers one request. Never throws. Called from many connection threads at once.
  virtual ApiResponse Handle(const ApiRequest& request) = 0;
  // True if `request` may proceed; the body is not looked at, so the server asks before reading
  // it (and answers Handle(request) unread when false, which must then be the refusal).
  // Thread-safe.
  virtual bool Authorized(const ApiRequest& request) const = 0;
};

// A bearer token check: "Authorization: Bearer <token>" (scheme case-insensitive, spaces around
// the token ignored), compared in constant time through SHA-256 digests. Immutable: thread-safe.
class BearerAuth {
 public:
  // `token` empty: no token is configured and every request passes.
  explicit BearerAuth(const std::string& token);
  // True when no token is configured or `authorization` carries it.
  bool Allows(std::string_view authorization) const;
  // True when a token is configured.
  bool enabled() const { return !digest_.empty(); }

 private:
  std::string digest_;  // SHA-256 hex of the token; empty when none
};

}  // namespace agentckpt
