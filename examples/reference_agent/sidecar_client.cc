#include "examples/reference_agent/sidecar_client.h"

#include <cpprest/http_client.h>

namespace reference_agent {

SidecarClient::SidecarClient(const std::string& base_url, std::chrono::milliseconds timeout) {
  web::http::client::http_client_config config;
  config.set_timeout(timeout);
  client_ = std::make_unique<web::http::client::http_client>(base_url, config);
}

SidecarClient::~SidecarClient() = default;

HttpReply SidecarClient::Call(const std::string& method, const std::string& path,
                              const nlohmann::json& body) {
  HttpReply reply;
  try {
    web::http::http_request request(method);
    request.set_request_uri(path);
    if (!body.is_null()) request.set_body(body.dump(), "application/json");
    web::http::http_response response = client_->request(request).get();
    reply.status = response.status_code();
    std::string text = response.extract_utf8string(true).get();
    reply.body = nlohmann::json::parse(text, nullptr, false);
    if (reply.body.is_discarded()) reply.body = nullptr;
  } catch (const std::exception& e) {
    reply.status = 0;
    reply.error = e.what();
  }
  return reply;
}

}  // namespace reference_agent
