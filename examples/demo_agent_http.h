// The demo agent's HTTP side: JSON requests to the sidecar's localhost API.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace demo {

struct Reply {
  int status = 0;          // 0 when the sidecar could not be reached
  nlohmann::json body;     // null when the body was empty or not JSON
  std::string error;       // transport error text when status is 0
};

// Sends `method` `path` with `body` (null: no body) to `base_url`. Never throws.
Reply Call(const std::string& base_url, const std::string& method, const std::string& path,
           const nlohmann::json& body = nullptr);

}  // namespace demo
