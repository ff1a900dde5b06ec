// HttpServer: serves an ApiRouter on HOST:PORT with cpprestsdk's http_listener. A body whose
// Content-Length exceeds the router's limit is answered 413 without being read; a chunked body
// is read and then checked. cpprestsdk exceptions never leave this class.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "http/api_router.h"

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
  // Stops serving without closing the listener: requests arriving from now on are answered 503
  // UNAVAILABLE at once, and it waits (at most 2 s) until every reply in progress has been sent.
  // For a process about to exit: cpprestsdk's asio listener can crash in close() while clients
  // keep their connections busy (seen under load), and an exiting process need not close it.
  void Drain();
  // Drain(), then closes the listener (idempotent). The listener object is kept until the server
  // is destroyed.
  void Stop();

  struct InFlight;  // requests in progress and the closing flag, shared with their replies

 private:
  std::string host_;
  int port_;
  int64_t body_max_bytes_;
  ApiRouter* router_;
  std::shared_ptr<InFlight> in_flight_;
  // Kept after close until the server is destroyed: connections cpprestsdk is still winding down
  // may refer to it.
  std::unique_ptr<web::http::experimental::listener::http_listener> listener_;
  bool closed_ = false;
};

// Sizes cpprestsdk's shared thread pool; call before the first HttpServer or client is made.
void ConfigureHttpThreads(size_t threads);

}  // namespace agentckpt
