// Tracer: makes spans and exports them in the background (docs/tracing.md).
//
// Ended spans go into a bounded queue; one background thread takes them in batches (when a
// batch is full or the schedule delay has passed) and hands each batch to the exporter (OTLP
// over HTTP in the sidecar, otlp_http_exporter.h). Ending a span never blocks on the network:
// when the queue is full the span is dropped and counted (dropped()), and the count is reported
// through `report`. Shutdown exports what is queued within a bounded time and cuts off an export
// in progress at that bound.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/env.h"
#include "common/status.h"
#include "tracing/span.h"

namespace agentckpt::tracing {

// Sends a batch of spans somewhere. Called from the tracer's thread only.
class SpanExporter {
 public:
  virtual ~SpanExporter() = default;
  // Sends `spans`; gives up at `deadline` (std::chrono::steady_clock) or as soon as `*cancel`
  // is set. An error Status when the batch was not accepted (it is not retried). Must not throw.
  virtual Status Export(const std::vector<std::unique_ptr<SpanData>>& spans,
                        std::chrono::steady_clock::time_point deadline,
                        const std::atomic<bool>* cancel) = 0;
};

struct BatchOptions {
  size_t max_queue = 2048;            // OTEL_BSP_MAX_QUEUE_SIZE
  size_t max_batch = 512;             // OTEL_BSP_MAX_EXPORT_BATCH_SIZE
  int64_t schedule_delay_ms = 5000;   // OTEL_BSP_SCHEDULE_DELAY
  int64_t export_timeout_ms = 10000;  // OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT
};

class Tracer {
 public:
  // `env` (borrowed, must outlive the tracer) gives span times and ids. `report` receives what
  // the tracer has to say (an export failing or recovering, spans dropped) as a message and
  // JSON fields; it is called on the tracer's thread and must not throw. Starts the thread.
  Tracer(Env* env, std::unique_ptr<SpanExporter> exporter, BatchOptions options,
         std::function<void(const std::string& message, const nlohmann::json& fields)> report);
  ~Tracer();  // Shutdown(0)
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // A span under `parent` (a new trace when invalid) starting at `start_monotonic_micros`.
  // Recording unless the parent is valid and not sampled. Thread-safe.
  Span Start(std::string_view name, SpanKind kind, const TraceContext& parent,
             int64_t start_monotonic_micros);
  // Queues an ended span; drops and counts it when the queue is full or the tracer is shut
  // down. Never blocks on the exporter. Thread-safe.
  void Submit(std::unique_ptr<SpanData> span);

  // Exports everything queued so far; true once done, false after `timeout_ms`. Thread-safe.
  bool ForceFlush(int64_t timeout_ms);
  // Exports what is queued for at most `timeout_ms` (an export in progress is cut off then),
  // stops the thread and refuses later spans. Idempotent; thread-safe.
  void Shutdown(int64_t timeout_ms);

  // The Env's monotonic clock, and a reading of it as Unix time in nanoseconds (the offset
  // between the two clocks is taken once, at construction). Thread-safe.
  int64_t NowMonotonicMicros() const { return env_->NowMonotonicMicros(); }
  int64_t UnixNanosAt(int64_t monotonic_micros) const {
    return (monotonic_micros + unix_minus_monotonic_micros_) * 1000;
  }

  // Counters since construction: spans dropped (queue full or after shutdown), spans in
  // batches the exporter accepted, spans in batches it failed. Thread-safe.
  uint64_t dropped() const { return dropped_.load(); }
  uint64_t exported() const { return exported_.load(); }
  uint64_t failed() const { return failed_.load(); }

 private:
  void Loop();
  // Exports one batch taken from the queue (called without mu_ held).
  void ExportBatch(std::vector<std::unique_ptr<SpanData>> batch,
                   std::chrono::steady_clock::time_point deadline);
  // Reports dropped spans when their count changed (at most every 10 s, and at shutdown).
  void ReportDrops(bool force);

  Env* env_;
  std::unique_ptr<SpanExporter> exporter_;
  BatchOptions options_;
  std::function<void(const std::string&, const nlohmann::json&)> report_;
  int64_t unix_minus_monotonic_micros_;

  std::mutex mu_;
  std::condition_variable cv_;       // wakes the thread
  std::condition_variable idle_cv_;  // wakes ForceFlush waiters
  std::deque<std::unique_ptr<SpanData>> queue_;
  uint64_t submitted_ = 0;  // spans queued so far
  uint64_t handled_ = 0;    // spans taken from the queue and exported (or failed) so far
  uint64_t flush_wanted_ = 0;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point stop_deadline_;
  std::atomic<bool> cancel_{false};  // cuts an export in progress off (shutdown deadline)
  std::atomic<uint64_t> dropped_{0}, exported_{0}, failed_{0};
  uint64_t reported_drops_ = 0;  // thread only
  std::chrono::steady_clock::time_point last_drop_report_;
  bool failing_ = false;  // thread only: the last export failed
  bool done_ = false;     // the thread has left its loop
  std::thread thread_;
};

}  // namespace agentckpt::tracing
