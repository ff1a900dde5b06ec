// HttpServer: serves an ApiRouter on HOST:PORT with cpprestsdk's http_listener. A body whose
// Content-Length exceeds the router's limit is answered 413 without being read; a chunked body
// is read and then checked. cpprestsdk exceptions never leave this class.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "sidecar/api_router.h"

namespace web::http::experimental::listener {
class http_listener;
}

namespace agentckpt {

class HttpServer {
 public:
  // `router` is borrowed and must outlive the server.
  HttpServer(std::string host, int port, int64_t body_max_bytes, ApiRouter* router);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Starts listening. kUnavailable if the address cannot be bound (e.g. in use).
  Status Start();
  // Stops listening and waits for requests in progress (idempotent).
  void Stop();

 private:
  std::string host_;
  int port_;
  int64_t body_max_bytes_;
  ApiRouter* router_;
  std::unique_ptr<web::http::experimental::listener::http_listener> listener_;
};

// Sizes cpprestsdk's shared thread pool; call before the first HttpServer or client is made.
void ConfigureHttpThreads(size_t threads);

}  // namespace agentckpt
