// Fuzzes the W3C traceparent parser (tracing/trace_context.h) with arbitrary bytes, as the HTTP
// API and the NATS subscriptions receive them. Invariants checked: nothing crashes or leaks; a
// header that parses has valid (non-zero) ids and formats to a header that parses to the same
// context; a version-00 header that parses is exactly 55 characters, and formats back to itself
// when its flags are 00 or 01; an invalid header never changes the thread's current context.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tracing/trace_context.h"

namespace {

void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using agentckpt::tracing::ContextScope;
  using agentckpt::tracing::CurrentContext;
  using agentckpt::tracing::FormatTraceparent;
  using agentckpt::tracing::ParseTraceparent;
  std::string_view header(reinterpret_cast<const char*>(data), size);
  auto parsed = ParseTraceparent(header);
  if (!parsed) {
    ContextScope scope((agentckpt::tracing::TraceContext()));
    Require(!CurrentContext().valid(), "an invalid context is never made current");
    return 0;
  }
  Require(parsed->valid(), "a parsed context has non-zero ids");
  std::string formatted = FormatTraceparent(*parsed);
  auto again = ParseTraceparent(formatted);
  Require(again && again->trace_id == parsed->trace_id && again->span_id == parsed->span_id &&
              again->sampled == parsed->sampled,
          "ParseTraceparent(FormatTraceparent(c)) == c");
  if (header.substr(0, 2) == "00") {
    Require(header.size() == 55, "a version-00 header is 55 characters");
    if (header.substr(53) == "00" || header.substr(53) == "01") {
      Require(formatted == header, "a version-00 header with flags 00/01 formats to itself");
    }
  }
  {
    ContextScope scope(*parsed);
    Require(CurrentContext().span_id == parsed->span_id, "the scope makes the context current");
  }
  Require(!CurrentContext().valid(), "the scope restores the previous context");
  return 0;
}
