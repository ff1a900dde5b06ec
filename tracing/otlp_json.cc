#include "tracing/otlp_json.h"

namespace agentckpt::tracing {
namespace {

using nlohmann::json;

json Value(const AttributeValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return {{"stringValue", *s}};
  if (const auto* i = std::get_if<int64_t>(&v)) return {{"intValue", std::to_string(*i)}};
  if (const auto* d = std::get_if<double>(&v)) return {{"doubleValue", *d}};
  return {{"boolValue", std::get<bool>(v)}};
}

std::string Hex(const std::array<uint8_t, 8>& id) {
  TraceContext c;
  c.span_id = id;
  return c.SpanIdHex();
}

json SpanJson(const SpanData& s) {
  json attributes = json::array();
  for (const auto& [key, value] : s.attributes) {
    attributes.push_back({{"key", key}, {"value", Value(value)}});
  }
  json j = {{"traceId", s.context.TraceIdHex()},
            {"spanId", s.context.SpanIdHex()},
            {"name", s.name},
            {"kind", static_cast<int>(s.kind)},
            {"startTimeUnixNano", std::to_string(s.start_unix_nanos)},
            {"endTimeUnixNano", std::to_string(s.end_unix_nanos)},
            {"attributes", std::move(attributes)}};
  bool has_parent = false;
  for (uint8_t b : s.parent_span_id) has_parent |= b != 0;
  if (has_parent) j["parentSpanId"] = Hex(s.parent_span_id);
  // STATUS_CODE_ERROR is 2; an unset status is left out.
  if (s.error) j["status"] = {{"code", 2}, {"message", s.status_message}};
  return j;
}

}  // namespace

json OtlpTraceRequest(const std::vector<std::unique_ptr<SpanData>>& spans,
                      const OtlpResource& resource) {
  json attributes = json::array();
  for (const auto& [key, value] : resource.attributes) {
    attributes.push_back({{"key", key}, {"value", {{"stringValue", value}}}});
  }
  json scope = {{"name", resource.scope_name}};
  if (!resource.scope_version.empty()) scope["version"] = resource.scope_version;
  json out = json::array();
  for (const auto& s : spans) out.push_back(SpanJson(*s));
  return {{"resourceSpans",
           json::array({{{"resource", {{"attributes", std::move(attributes)}}},
                         {"scopeSpans", json::array({{{"scope", std::move(scope)},
                                                      {"spans", std::move(out)}}})}}})}};
}

}  // namespace agentckpt::tracing
