#include "http/http_server.h"

#include <cpprest/uri.h>
#include <poll.h>
#include <pplx/threadpool.h>
#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "observability/json_log.h"

namespace agentckpt {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// Request line and headers together (the token and JSON content types are short).
constexpr uint32_t kHeaderLimitBytes = 16 * 1024;
// Read ahead of the parser, beyond the header.
constexpr uint32_t kReadAheadBytes = 16 * 1024;
// After a reply to a request whose body was left unread: how much of what the client still sends
// is read and dropped, and for how long, before the socket is closed (see LingeringClose).
constexpr size_t kLingerBytes = 256 * 1024;
constexpr int kLingerMs = 1000;
// Connections served at once; more are answered 503 and closed.
constexpr int kMaxConnections = 128;
}  // namespace

// The listening socket and the thread that accepts on it.
struct HttpServer::Listener {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread thread;
};

struct HttpServer::InFlight {
  std::mutex mu;
  std::condition_variable cv;
  int in_progress = 0;  // requests taken and not yet replied to (reply sent or failed)
  bool closing = false;
  int connections = 0;    // connection threads alive
  std::set<int> sockets;  // their sockets, shut down by Stop()
  bool stopped = false;

  // Counts a request in; false when closing (the caller answers 503 and counts it anyway).
  bool Enter() {
    std::lock_guard<std::mutex> lock(mu);
    ++in_progress;
    return !closing;
  }
  void Leave() {
    {
      std::lock_guard<std::mutex> lock(mu);
      --in_progress;
    }
    cv.notify_all();
  }
};

namespace {

ApiResponse Unreadable(const std::string& what) {
  return ApiRouter::Error(400, "BAD_REQUEST", "cannot read the request: " + what);
}

ApiResponse TooLarge(int64_t limit) {
  return ApiRouter::Error(413, "PAYLOAD_TOO_LARGE",
                          "request body exceeds " + std::to_string(limit) + " bytes");
}

// Method, path, query and Authorization of a request whose header has been read. False (and a
// 400 in `bad`) when the target does not decode.
bool DescribeRequest(const http::request_parser<http::string_body>& parser, ApiRequest* req,
                     ApiResponse* bad) {
  const auto& h = parser.get();
  req->method = std::string(h.method_string());
  std::string target(h.target());
  size_t q = target.find('?');
  try {
    req->path = web::uri::decode(target.substr(0, q));
    if (q != std::string::npos) {
      for (const auto& [k, v] : web::uri::split_query(target.substr(q + 1))) {
        req->query[web::uri::decode(k)] = web::uri::decode(v);
      }
    }
  } catch (const std::exception& e) {
    *bad = Unreadable(e.what());
    return false;
  }
  auto auth = h.find(http::field::authorization);
  if (auth != h.end()) req->authorization = std::string(auth->value());
  auto traceparent = h.find("traceparent");
  if (traceparent != h.end()) req->traceparent = std::string(traceparent->value());
  return true;
}

// Writes `r`; false if the connection failed.
bool Send(tcp::socket& socket, const ApiResponse& r, unsigned version, bool keep_alive) {
  http::response<http::string_body> res;
  res.version(version);
  res.result(static_cast<unsigned>(r.status));
  res.set(http::field::content_type, r.content_type);
  for (const auto& [name, value] : r.headers) res.set(name, value);
  res.body() = r.body;
  res.keep_alive(keep_alive);
  res.prepare_payload();
  boost::system::error_code ec;
  http::write(socket, res, ec);
  return !ec;
}

// Closing a socket that still holds unread data makes the kernel send a reset, which can destroy
// the reply before the client reads it. So: stop sending, then read and drop what the client
// still sends (bounded by kLingerBytes and kLingerMs) until it closes, then close.
void LingeringClose(int fd) {
  ::shutdown(fd, SHUT_WR);
  char buf[16 * 1024];
  size_t dropped = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kLingerMs);
  while (dropped < kLingerBytes) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    dropped += static_cast<size_t>(n);
  }
}

void Serve(tcp::socket socket, std::shared_ptr<HttpServer::InFlight> in_flight, HttpHandler* router,
           int64_t body_max_bytes) {
  const int fd = socket.native_handle();
  boost::system::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  // Bounded: at most this much is read ahead of what the parser has taken.
  boost::beast::flat_buffer buffer(kHeaderLimitBytes + kReadAheadBytes);
  // Beast reads into the buffer's free capacity, at least 512 bytes at a time: with room
  // reserved up front, a request of a few KB (header and body) arrives in one recv() instead
  // of one per 512 bytes.
  buffer.reserve(kReadAheadBytes);
  const auto limit = static_cast<uint64_t>(body_max_bytes);
  for (bool keep_alive = true; keep_alive;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimitBytes);
    // Checked below, once the header is read (boost::none would refuse every Content-Length in
    // Boost 1.74: a length compares greater than an empty optional).
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    http::read_header(socket, buffer, parser, ec);
    if (ec) {
      // A header that does not parse is answered; the end of the stream, a reset or Stop() is not.
      if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
          ec != http::error::end_of_stream && ec != http::error::partial_message) {
        Send(socket, Unreadable(ec.message()), 11, false);
      }
      break;
    }
    const unsigned version = parser.get().version();
    keep_alive = parser.get().keep_alive();
    ApiRequest req;
    ApiResponse bad;
    if (!in_flight->Enter()) {
      Send(socket, ApiRouter::Error(503, "UNAVAILABLE", "the sidecar is shutting down"), version,
           false);
      in_flight->Leave();
      break;
    }
    ApiResponse response;
    bool body_read = false;
    if (!DescribeRequest(parser, &req, &bad)) {
      response = bad;
    } else if (!router->Authorized(req)) {
      response = router->Handle(req);  // 401 without reading the body
    } else if (parser.content_length() && *parser.content_length() > limit) {
      response = TooLarge(body_max_bytes);
    } else {
      if (parser.get()[http::field::expect] == "100-continue") {
        http::response<http::empty_body> go{http::status::continue_, version};
        http::write(socket, go, ec);
      }
      // Each chunk's size is checked as soon as its chunk header is read: a chunk that takes
      // the body over the limit is refused before any of its bytes is read.
      parser.body_limit(limit);
      if (!ec) http::read(socket, buffer, parser, ec);
      if (ec == http::error::body_limit) {
        response = TooLarge(body_max_bytes);
      } else if (ec) {
        response = Unreadable(ec.message());
      } else {
        body_read = true;
        req.body = std::move(parser.get().body());
        response = router->Handle(req);
      }
    }
    // A body left unread (refused, or broken) ends the connection after the reply.
    const bool sent = Send(socket, response, version, keep_alive && body_read);
    in_flight->Leave();
    if (sent && !body_read) LingeringClose(fd);
    keep_alive = keep_alive && body_read && sent;
  }
  socket.shutdown(tcp::socket::shutdown_both, ec);
  {
    std::lock_guard<std::mutex> lock(in_flight->mu);
    in_flight->sockets.erase(fd);
    socket.close(ec);
    --in_flight->connections;
  }
  in_flight->cv.notify_all();
}

void AcceptLoop(HttpServer::Listener* listener, std::shared_ptr<HttpServer::InFlight> in_flight,
                HttpHandler* router, int64_t body_max_bytes) {
  for (;;) {
    tcp::socket socket(listener->io);
    boost::system::error_code ec;
    listener->acceptor.accept(socket, ec);
    if (ec) {
      std::lock_guard<std::mutex> lock(in_flight->mu);
      if (in_flight->stopped) return;
      continue;  // e.g. the peer went away before the accept: take the next one
    }
    std::unique_lock<std::mutex> lock(in_flight->mu);
    if (in_flight->stopped) return;
    if (in_flight->connections >= kMaxConnections) {
      lock.unlock();
      Send(socket,
           ApiRouter::Error(503, "UNAVAILABLE",
                            "too many connections (" + std::to_string(kMaxConnections) + ")"),
           11, false);
      continue;
    }
    ++in_flight->connections;
    in_flight->sockets.insert(socket.native_handle());
    lock.unlock();
    // One thread per connection: a request that waits for the store never holds up another
    // connection's (e.g. /healthz).
    std::thread([in_flight, router, body_max_bytes, s = std::move(socket)]() mutable {
      Serve(std::move(s), in_flight, router, body_max_bytes);
    }).detach();
  }
}

}  // namespace

void ConfigureHttpThreads(size_t threads) {
  crossplat::threadpool::initialize_with_threads(threads);
}

HttpServer::HttpServer(std::string host, int port, int64_t body_max_bytes, HttpHandler* router)
    : host_(std::move(host)),
      port_(port),
      body_max_bytes_(body_max_bytes),
      router_(router),
      in_flight_(std::make_shared<InFlight>()) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  std::string host = host_;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string where = host_ + ":" + std::to_string(port_);
  auto listener = std::make_unique<Listener>();
  try {
    tcp::resolver resolver(listener->io);
    auto endpoints = resolver.resolve(host, std::to_string(port_));
    tcp::endpoint endpoint = endpoints.begin()->endpoint();
    listener->acceptor.open(endpoint.protocol());
    listener->acceptor.set_option(asio::socket_base::reuse_address(true));
    listener->acceptor.bind(endpoint);
    listener->acceptor.listen(asio::socket_base::max_listen_connections);
    port_ = listener->acceptor.local_endpoint().port();
  } catch (const std::exception& e) {
    return UnavailableError("cannot listen on " + where + ": " + e.what());
  }
  listener_ = std::move(listener);
  listener_->thread = std::thread([l = listener_.get(), in = in_flight_, router = router_,
                                   limit = body_max_bytes_] { AcceptLoop(l, in, router, limit); });
  return OkStatus();
}

void HttpServer::Drain(int64_t wait_ms) {
  if (!listener_) return;
  std::unique_lock<std::mutex> lock(in_flight_->mu);
  in_flight_->closing = true;
  if (!in_flight_->cv.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(0, wait_ms)),
                               [this] { return in_flight_->in_progress == 0; })) {
    LogWarn("http replies still in progress after the drain",
            {{"inProgress", in_flight_->in_progress}});
  }
}

void HttpServer::Stop() {
  if (!listener_ || closed_) return;
  Drain();
  {
    std::lock_guard<std::mutex> lock(in_flight_->mu);
    in_flight_->stopped = true;
    // Wakes the blocking accept() and every connection waiting for its next request.
    ::shutdown(listener_->acceptor.native_handle(), SHUT_RDWR);
    for (int fd : in_flight_->sockets) ::shutdown(fd, SHUT_RDWR);
  }
  if (listener_->thread.joinable()) listener_->thread.join();
  std::unique_lock<std::mutex> lock(in_flight_->mu);
  if (!in_flight_->cv.wait_for(lock, std::chrono::seconds(2),
                               [this] { return in_flight_->connections == 0; })) {
    LogWarn("http connections still open after stop", {{"open", in_flight_->connections}});
  }
  boost::system::error_code ec;
  listener_->acceptor.close(ec);
  closed_ = true;
}

}  // namespace agentckpt
