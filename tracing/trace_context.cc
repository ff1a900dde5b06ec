#include "tracing/trace_context.h"

namespace agentckpt::tracing {
namespace {

thread_local TraceContext current_context;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case is not allowed by the specification
}

// Decodes `hex` (2 * N lower-case hex characters) into `out`; false if a character is not one.
template <size_t N>
bool DecodeHex(std::string_view hex, std::array<uint8_t, N>* out) {
  for (size_t i = 0; i < N; ++i) {
    int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

template <size_t N>
bool AllZero(const std::array<uint8_t, N>& a) {
  for (uint8_t b : a) {
    if (b != 0) return false;
  }
  return true;
}

template <size_t N>
std::string EncodeHex(const std::array<uint8_t, N>& a) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * N, '0');
  for (size_t i = 0; i < N; ++i) {
    out[2 * i] = kDigits[a[i] >> 4];
    out[2 * i + 1] = kDigits[a[i] & 0xf];
  }
  return out;
}

}  // namespace

bool TraceContext::valid() const { return !AllZero(trace_id) && !AllZero(span_id); }
std::string TraceContext::TraceIdHex() const { return EncodeHex(trace_id); }
std::string TraceContext::SpanIdHex() const { return EncodeHex(span_id); }

std::optional<TraceContext> ParseTraceparent(std::string_view h) {
  // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55 characters.
  constexpr size_t kLength = 55;
  if (h.size() < kLength) return std::nullopt;
  if (h[2] != '-' || h[35] != '-' || h[52] != '-') return std::nullopt;
  std::array<uint8_t, 1> version{}, flags{};
  if (!DecodeHex(h.substr(0, 2), &version) || version[0] == 0xff) return std::nullopt;
  // Version 00 has exactly these fields; a later version may add fields after a '-'.
  if (h.size() > kLength && (version[0] == 0 || h[kLength] != '-')) return std::nullopt;
  TraceContext c;
  if (!DecodeHex(h.substr(3, 32), &c.trace_id) || !DecodeHex(h.substr(36, 16), &c.span_id) ||
      !DecodeHex(h.substr(53, 2), &flags)) {
    return std::nullopt;
  }
  if (!c.valid()) return std::nullopt;
  c.sampled = (flags[0] & 0x01) != 0;
  return c;
}

std::string FormatTraceparent(const TraceContext& c) {
  return "00-" + c.TraceIdHex() + "-" + c.SpanIdHex() + (c.sampled ? "-01" : "-00");
}

TraceContext CurrentContext() { return current_context; }

ContextScope::ContextScope(const TraceContext& context) {
  if (!context.valid()) return;
  previous_ = current_context;
  current_context = context;
  set_ = true;
}

ContextScope::~ContextScope() {
  if (set_) current_context = previous_;
}

}  // namespace agentckpt::tracing
