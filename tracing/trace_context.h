// TraceContext: the W3C Trace Context identity of a span (trace id, span id, sampled flag) and
// the `traceparent` header that carries it (https://www.w3.org/TR/trace-context/), plus the
// calling thread's current context, which new spans take as their parent.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace agentckpt::tracing {

struct TraceContext {
  std::array<uint8_t, 16> trace_id{};
  std::array<uint8_t, 8> span_id{};
  bool sampled = false;

  // True when both ids are non-zero (an all-zero id is invalid in W3C Trace Context).
  bool valid() const;
  // 32 / 16 lower-case hex characters.
  std::string TraceIdHex() const;
  std::string SpanIdHex() const;
};

// Parses a `traceparent` header value ("00-<32 hex>-<16 hex>-<2 hex>", lower-case hex; a
// future version may append "-..." fields, which are ignored). nullopt for anything else:
// wrong length or version ("ff"), upper-case or non-hex digits, all-zero ids. Never throws;
// thread-safe.
std::optional<TraceContext> ParseTraceparent(std::string_view header);

// "00-<trace id>-<span id>-01" (or "-00" when not sampled). Thread-safe.
std::string FormatTraceparent(const TraceContext& context);

// The calling thread's current context (invalid when none is set). Thread-local.
TraceContext CurrentContext();

// Makes `context` the calling thread's current context until destroyed, then restores the
// previous one. An invalid `context` leaves the current one as it is. Not movable; use on one
// thread only.
class ContextScope {
 public:
  explicit ContextScope(const TraceContext& context);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  TraceContext previous_;
  bool set_ = false;
};

}  // namespace agentckpt::tracing
