// HttpServer: serves an HttpHandler (http_handler.h: the API router, the web console) on HOST:PORT over HTTP/1.1 (Boost.Beast, blocking sockets, one
// thread per connection, keep-alive). A body over the limit is answered 413 and the connection
// closed before more than the limit is read: a Content-Length over it is refused as soon as the
// header is read, and a chunked body as soon as a chunk header takes the total over it (no byte
// of that chunk is read). Library exceptions never leave this class.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "http/api_router.h"
#include "http/http_handler.h"

namespace agentckpt {

class HttpServer {
 public:
  // `router` is borrowed and must outlive the server.
  HttpServer(std::string host, int port, int64_t body_max_bytes, HttpHandler* router);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Starts listening (port 0: a free port the system picks). kUnavailable if the address
  // cannot be bound (e.g. in use).
  Status Start();
  // The port listened on (the one picked for port 0) once Start succeeded; else the port given.
  int port() const { return port_; }
  // Stops serving without closing the listener: requests arriving from now on are answered 503
  // UNAVAILABLE at once, and it waits (at most `wait_ms`) until every reply in progress has been
  // sent.
  // For a process about to exit, which need not close anything.
  void Drain(int64_t wait_ms = 2000);
  // Drain(), then closes the listener and every connection (idempotent); waits (at most 2 s)
  // for the connection threads to end.
  void Stop();

  struct InFlight;  // requests in progress, connections and the closing flag, shared with them
  struct Listener;  // the listening socket and its accept thread

 private:
  std::string host_;
  int port_;
  int64_t body_max_bytes_;
  HttpHandler* router_;
  std::shared_ptr<InFlight> in_flight_;
  std::unique_ptr<Listener> listener_;
  bool closed_ = false;
};

// Sizes cpprestsdk's shared thread pool (the Firestore client's); call before the first client
// is made.
void ConfigureHttpThreads(size_t threads);

}  // namespace agentckpt
