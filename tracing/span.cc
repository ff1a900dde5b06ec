#include "tracing/span.h"

#include <atomic>

#include "tracing/tracer.h"

namespace agentckpt::tracing {
namespace {

std::atomic<Tracer*> global_tracer{nullptr};

}  // namespace

Span::Span(Tracer* tracer, std::unique_ptr<SpanData> data, const TraceContext& context)
    : tracer_(tracer), data_(std::move(data)), context_(context) {}

Span::Span(Span&& other) noexcept
    : tracer_(other.tracer_), data_(std::move(other.data_)), context_(other.context_) {}

Span& Span::operator=(Span&& other) noexcept {
  if (this != &other) {
    End();
    tracer_ = other.tracer_;
    data_ = std::move(other.data_);
    context_ = other.context_;
  }
  return *this;
}

Span::~Span() { End(); }

void Span::Set(std::string_view key, AttributeValue value) {
  if (!data_) return;
  for (auto& [k, v] : data_->attributes) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  data_->attributes.emplace_back(std::string(key), std::move(value));
}

void Span::SetString(std::string_view key, std::string_view value) {
  if (data_) Set(key, std::string(value));
}
void Span::SetInt(std::string_view key, int64_t value) { Set(key, value); }
void Span::SetDouble(std::string_view key, double value) { Set(key, value); }
void Span::SetBool(std::string_view key, bool value) { Set(key, value); }

void Span::SetError(const Status& status) {
  if (!status.ok()) SetError(status.ToString());
}

void Span::SetError(std::string_view message) {
  if (!data_) return;
  data_->error = true;
  data_->status_message = std::string(message);
}

void Span::End() {
  if (data_) EndAt(tracer_->NowMonotonicMicros());
}

void Span::EndAt(int64_t monotonic_micros) {
  if (!data_) return;
  data_->end_unix_nanos = tracer_->UnixNanosAt(monotonic_micros);
  tracer_->Submit(std::move(data_));
}

void SetGlobalTracer(Tracer* tracer) { global_tracer.store(tracer, std::memory_order_release); }
Tracer* GlobalTracer() { return global_tracer.load(std::memory_order_acquire); }

Span StartSpan(std::string_view name, SpanKind kind) {
  Tracer* t = GlobalTracer();
  if (t == nullptr) return Span();
  return t->Start(name, kind, CurrentContext(), t->NowMonotonicMicros());
}

Span StartSpanWithParent(std::string_view name, SpanKind kind, const TraceContext& parent) {
  Tracer* t = GlobalTracer();
  if (t == nullptr) return Span();
  return t->Start(name, kind, parent, t->NowMonotonicMicros());
}

Span StartSpanAt(std::string_view name, SpanKind kind, const TraceContext& parent,
                 int64_t start_monotonic_micros) {
  Tracer* t = GlobalTracer();
  if (t == nullptr) return Span();
  return t->Start(name, kind, parent, start_monotonic_micros);
}

Span StartChildSpan(std::string_view name, SpanKind kind) {
  Tracer* t = GlobalTracer();
  if (t == nullptr) return Span();
  TraceContext parent = CurrentContext();
  if (!parent.valid()) return Span();
  return t->Start(name, kind, parent, t->NowMonotonicMicros());
}

}  // namespace agentckpt::tracing
