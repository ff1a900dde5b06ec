#include "tests/tracing/otlp_receiver.h"

#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace agentckpt::testing {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using nlohmann::json;

struct OtlpReceiver::Listener {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread thread;
};

namespace {

// An OTLP AnyValue as a plain JSON value.
json Plain(const json& v) {
  for (const char* k : {"stringValue", "intValue", "doubleValue", "boolValue"}) {
    if (v.contains(k)) return v[k];
  }
  return v;
}

// The spans of an ExportTraceServiceRequest; false if it is not one.
bool Decode(const json& body, std::vector<ReceivedSpan>* out) {
  if (!body.is_object() || !body.contains("resourceSpans")) return false;
  for (const json& rs : body["resourceSpans"]) {
    std::string service;
    for (const json& a : rs["resource"]["attributes"]) {
      if (a["key"] == "service.name") service = Plain(a["value"]).get<std::string>();
    }
    for (const json& ss : rs["scopeSpans"]) {
      for (const json& s : ss["spans"]) {
        ReceivedSpan r;
        r.service = service;
        r.trace_id = s.at("traceId").get<std::string>();
        r.span_id = s.at("spanId").get<std::string>();
        r.parent_span_id = s.value("parentSpanId", "");
        r.name = s.at("name").get<std::string>();
        r.kind = s.value("kind", 0);
        // Numbers as strings (the OTLP/JSON mapping) or as numbers (some SDKs).
        auto nanos = [&s](const char* key) {
          const json& v = s.at(key);
          return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>();
        };
        r.start_ns = nanos("startTimeUnixNano");
        r.end_ns = nanos("endTimeUnixNano");
        if (s.contains("status")) r.status_code = s["status"].value("code", 0);
        for (const json& a : s.value("attributes", json::array())) {
          r.attributes[a["key"].get<std::string>()] = Plain(a["value"]);
        }
        out->push_back(std::move(r));
      }
    }
  }
  return true;
}

}  // namespace

std::string ReceivedSpan::Attr(const std::string& key) const {
  if (!attributes.contains(key)) return "";
  const json& v = attributes[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

OtlpReceiver::OtlpReceiver() : listener_(std::make_unique<Listener>()) {
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
  listener_->acceptor.open(ep.protocol());
  listener_->acceptor.set_option(asio::socket_base::reuse_address(true));
  listener_->acceptor.bind(ep);
  listener_->acceptor.listen();
  port_ = listener_->acceptor.local_endpoint().port();
  listener_->thread = std::thread([this] {
    for (;;) {
      boost::system::error_code ec;
      tcp::socket socket(listener_->io);
      listener_->acceptor.accept(socket, ec);
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      if (ec) continue;
      int fd = socket.release();
      sockets_.push_back(fd);
      connections_.emplace_back([this, fd] { Serve(fd); });
    }
  });
}

OtlpReceiver::~OtlpReceiver() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (int fd : sockets_) ::shutdown(fd, SHUT_RDWR);
  }
  cv_.notify_all();
  // shutdown() wakes the blocked accept() with an error; the acceptor is closed only once its
  // thread has ended (closing it from here while accept() runs is a data race).
  ::shutdown(listener_->acceptor.native_handle(), SHUT_RDWR);
  listener_->thread.join();
  boost::system::error_code ignored;
  listener_->acceptor.close(ignored);
  for (std::thread& t : connections_) t.join();
}

void OtlpReceiver::Serve(int fd) {
  asio::io_context io;
  tcp::socket socket(io, tcp::v4(), fd);
  boost::beast::flat_buffer buffer;
  for (;;) {
    http::request<http::string_body> req;
    boost::system::error_code ec;
    http::read(socket, buffer, req, ec);
    if (ec) break;
    std::vector<ReceivedSpan> got;
    json body = json::parse(req.body(), nullptr, false);
    bool ok = false;
    try {
      ok = Decode(body, &got);
    } catch (const std::exception&) {
      ok = false;
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++requests_;
      if (!ok) ++bad_bodies_;
      spans_.insert(spans_.end(), got.begin(), got.end());
      cv_.notify_all();
      cv_.wait(lock, [this] { return !stalled_ || stopping_; });
      if (stopping_) break;
    }
    http::response<http::string_body> res{ok ? http::status::ok : http::status::bad_request,
                                          req.version()};
    res.set(http::field::content_type, "application/json");
    res.body() = "{}";
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    http::write(socket, res, ec);
    if (ec || !req.keep_alive()) break;
  }
  boost::system::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  std::lock_guard<std::mutex> lock(mu_);
  // Closed by the socket's destructor; forget the descriptor so it is not shut down twice.
  std::erase(sockets_, fd);
}

std::string OtlpReceiver::endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::vector<ReceivedSpan> OtlpReceiver::Spans() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spans_;
}

std::vector<ReceivedSpan> OtlpReceiver::WaitFor(
    const std::function<bool(const std::vector<ReceivedSpan>&)>& done,
    std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return done(spans_); });
  return spans_;
}

int OtlpReceiver::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

int OtlpReceiver::bad_bodies() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bad_bodies_;
}

void OtlpReceiver::Stall() {
  std::lock_guard<std::mutex> lock(mu_);
  stalled_ = true;
}

void OtlpReceiver::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stalled_ = false;
  }
  cv_.notify_all();
}

}  // namespace agentckpt::testing
