#include "examples/demo_agent_http.h"

#include <cpprest/http_client.h>

namespace demo {

Reply Call(const std::string& base_url, const std::string& method, const std::string& path,
           const nlohmann::json& body) {
  Reply reply;
  try {
    web::http::client::http_client_config config;
    config.set_timeout(std::chrono::seconds(10));
    web::http::client::http_client client(base_url, config);
    web::http::http_request request(method);
    request.set_request_uri(path);
    if (!body.is_null()) request.set_body(body.dump(), "application/json");
    web::http::http_response response = client.request(request).get();
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

}  // namespace demo
