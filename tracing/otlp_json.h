// The OTLP/JSON encoding of a batch of spans: an ExportTraceServiceRequest as the OTLP
// specification's JSON mapping writes it (ids in hex, 64-bit integers as strings, enums as
// numbers), for POST /v1/traces with Content-Type application/json.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tracing/span.h"

namespace agentckpt::tracing {

// The process's resource attributes (service.name first) and the instrumentation scope.
struct OtlpResource {
  std::vector<std::pair<std::string, std::string>> attributes;
  std::string scope_name = "agentckpt";
  std::string scope_version;
};

// {"resourceSpans":[{"resource":{...},"scopeSpans":[{"scope":{...},"spans":[...]}]}]}.
// Pure: thread-safe, never throws (text that is not UTF-8 is replaced when dumped).
nlohmann::json OtlpTraceRequest(const std::vector<std::unique_ptr<SpanData>>& spans,
                                const OtlpResource& resource);

}  // namespace agentckpt::tracing
