// SidecarClient: JSON over HTTP to the agentckpt sidecar's localhost API (docs/http-api.md).
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace web::http::client {
class http_client;
}

namespace reference_agent {

struct HttpReply {
  int status = 0;       // 0 when the sidecar could not be reached
  nlohmann::json body;  // null when the body was empty or not JSON
  std::string error;    // transport error text when status is 0
};

class SidecarClient {
 public:
  // `base_url` like "http://127.0.0.1:8787"; each request times out after `timeout`.
  SidecarClient(const std::string& base_url, std::chrono::milliseconds timeout);
  ~SidecarClient();

  // One request (`body` null: no body). Never throws. Thread-compatible.
  HttpReply Call(const std::string& method, const std::string& path,
                 const nlohmann::json& body = nullptr);

 private:
  std::unique_ptr<web::http::client::http_client> client_;
};

}  // namespace reference_agent
