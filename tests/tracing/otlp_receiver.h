// OtlpReceiver: a loopback OTLP/HTTP collector for tests. It listens on 127.0.0.1 (port 0: a
// free one), takes POST /v1/traces with OTLP/JSON bodies, keeps every span it receives and
// answers 200. Stall() makes it hold every request it receives unanswered (a collector that
// accepts connections and never replies) until Release() or destruction. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace agentckpt::testing {

// One span as received, with the resource's service.name.
struct ReceivedSpan {
  std::string service;
  std::string trace_id, span_id, parent_span_id;  // hex; parent "" for a root
  std::string name;
  int kind = 0;
  int64_t start_ns = 0, end_ns = 0;
  int status_code = 0;                                   // 2: ERROR
  nlohmann::json attributes = nlohmann::json::object();  // key -> plain value
  double DurationMs() const { return static_cast<double>(end_ns - start_ns) / 1e6; }
  // The attribute as a string ("" when absent); int values come as strings in OTLP/JSON.
  std::string Attr(const std::string& key) const;
};

class OtlpReceiver {
 public:
  OtlpReceiver();  // listening when constructed
  ~OtlpReceiver();
  OtlpReceiver(const OtlpReceiver&) = delete;
  OtlpReceiver& operator=(const OtlpReceiver&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:PORT" (OTEL_EXPORTER_OTLP_ENDPOINT).
  std::string endpoint() const;

  // Every span received so far.
  std::vector<ReceivedSpan> Spans() const;
  // Waits (bounded) until `done(spans)` holds for the spans received; the spans then, or the
  // last ones seen on timeout (the caller's checks then fail with them in view).
  std::vector<ReceivedSpan> WaitFor(
      const std::function<bool(const std::vector<ReceivedSpan>&)>& done,
      std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Requests received (answered or held), and bodies that were not OTLP/JSON.
  int requests() const;
  int bad_bodies() const;

  // From now on requests are held unanswered; Release() answers them and stops holding.
  void Stall();
  void Release();

 private:
  void Serve(int fd);
  struct Listener;
  std::unique_ptr<Listener> listener_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ReceivedSpan> spans_;
  int requests_ = 0, bad_bodies_ = 0;
  bool stalled_ = false, stopping_ = false;
  std::vector<std::thread> connections_;
  std::vector<int> sockets_;
};

}  // namespace agentckpt::testing
