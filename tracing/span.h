// Span: one timed operation of a trace, started from the process's tracer (SetGlobalTracer) and
// exported when it ends. With no tracer set (tracing off, the default) every function here
// returns an inert span whose methods do nothing: one atomic load per span, no allocation.
//
// Times are the Env's monotonic clock (microseconds), turned into Unix time by the tracer, so a
// span's duration is exactly the difference of the two clock readings it was given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/status.h"
#include "tracing/trace_context.h"

namespace agentckpt::tracing {

class Tracer;

// OTLP span kinds (their numeric values in the protocol).
enum class SpanKind { kInternal = 1, kServer = 2, kClient = 3, kProducer = 4, kConsumer = 5 };

using AttributeValue = std::variant<std::string, int64_t, double, bool>;

// What an ended span exports.
struct SpanData {
  TraceContext context;
  std::array<uint8_t, 8> parent_span_id{};  // all zero for a root span
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  int64_t start_unix_nanos = 0;
  int64_t end_unix_nanos = 0;
  std::vector<std::pair<std::string, AttributeValue>> attributes;
  bool error = false;  // status ERROR (else UNSET)
  std::string status_message;
};

class Span {
 public:
  Span() = default;  // inert
  Span(Tracer* tracer, std::unique_ptr<SpanData> data, const TraceContext& context);
  Span(Span&& other) noexcept;
  Span& operator=(Span&& other) noexcept;
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  ~Span();  // End()

  // True when the span will be exported (a tracer is set and the trace is sampled).
  bool recording() const { return data_ != nullptr; }
  // The span's identity (invalid for an inert span), for children and propagation.
  const TraceContext& context() const { return context_; }

  // Attributes; a later value for the same key replaces the earlier one. No-ops when not
  // recording.
  void SetString(std::string_view key, std::string_view value);
  void SetInt(std::string_view key, int64_t value);
  void SetDouble(std::string_view key, double value);
  void SetBool(std::string_view key, bool value);
  // Status ERROR with `status`'s text (nothing for an OK status).
  void SetError(const Status& status);
  void SetError(std::string_view message);

  // Ends the span now, or at `monotonic_micros` (the Env's monotonic clock). Later calls do
  // nothing.
  void End();
  void EndAt(int64_t monotonic_micros);

 private:
  void Set(std::string_view key, AttributeValue value);
  Tracer* tracer_ = nullptr;
  std::unique_ptr<SpanData> data_;
  TraceContext context_;
};

// The process's tracer; null (the default) turns tracing off. The tracer must outlive every
// span started from it. Thread-safe.
void SetGlobalTracer(Tracer* tracer);
Tracer* GlobalTracer();

// Starts a span whose parent is the calling thread's CurrentContext() (a new trace without one).
Span StartSpan(std::string_view name, SpanKind kind = SpanKind::kInternal);
// Starts a span under `parent` (a new trace when `parent` is invalid), e.g. a remote parent
// from a traceparent header. A parent not sampled gives a non-recording span that still carries
// a context (so the decision propagates).
Span StartSpanWithParent(std::string_view name, SpanKind kind, const TraceContext& parent);
// As StartSpanWithParent, starting at `start_monotonic_micros` on the Env's monotonic clock.
Span StartSpanAt(std::string_view name, SpanKind kind, const TraceContext& parent,
                 int64_t start_monotonic_micros);
// A span under the current context only: inert when the thread has none (for work that is
// worth tracing inside a traced operation, and noise on its own, such as a journal commit).
Span StartChildSpan(std::string_view name, SpanKind kind = SpanKind::kInternal);

// Makes `span` the thread's current context for the scope (nothing for an inert span).
class SpanScope {
 public:
  explicit SpanScope(const Span& span) : scope_(span.context()) {}

 private:
  ContextScope scope_;
};

}  // namespace agentckpt::tracing
