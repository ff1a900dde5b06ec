#include "tracing/tracing_setup.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace agentckpt::tracing {
namespace {

std::string Trim(std::string s) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && blank(s.back())) s.pop_back();
  size_t i = 0;
  while (i < s.size() && blank(s[i])) ++i;
  return s.substr(i);
}

std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    int v = 0;
    if (s[i] == '%' && i + 2 < s.size() &&
        std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ptr == s.data() + i + 3) {
      out.push_back(static_cast<char>(v));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A positive integer variable; its default (and a warning) when set to anything else.
template <typename T>
void ReadPositive(const EnvLookup& lookup, const Reporter& warn, const std::string& name, T* out) {
  auto v = lookup(name);
  if (!v || v->empty()) return;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size() || n <= 0) {
    if (warn) warn("tracing: ignored a setting that is not a positive integer", {{name, *v}});
    return;
  }
  *out = static_cast<T>(n);
}

// The signal-specific variable when set, else the general one.
std::optional<std::string> Either(const EnvLookup& lookup, const std::string& traces,
                                  const std::string& general) {
  auto v = lookup(traces);
  if (v && !v->empty()) return v;
  v = lookup(general);
  if (v && !v->empty()) return v;
  return std::nullopt;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ParseKeyValueList(const std::string& text,
                                                                   std::string* bad) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (Trim(item).empty()) continue;
    size_t eq = item.find('=');
    std::string key = eq == std::string::npos ? "" : Trim(item.substr(0, eq));
    if (key.empty()) {
      if (bad != nullptr) *bad += (bad->empty() ? "" : ", ") + Trim(item);
      continue;
    }
    out.emplace_back(PercentDecode(key), PercentDecode(Trim(item.substr(eq + 1))));
  }
  return out;
}

std::optional<TracingSettings> TracingSettingsFrom(const EnvLookup& lookup, const Reporter& warn) {
  if (auto disabled = lookup("OTEL_SDK_DISABLED"); disabled && Lower(Trim(*disabled)) == "true") {
    return std::nullopt;
  }
  if (auto exporter = lookup("OTEL_TRACES_EXPORTER");
      exporter && !exporter->empty() && Lower(Trim(*exporter)) != "otlp") {
    return std::nullopt;
  }
  TracingSettings s;
  if (auto traces = lookup("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); traces && !traces->empty()) {
    s.exporter.endpoint = Trim(*traces);
  } else if (auto base = lookup("OTEL_EXPORTER_OTLP_ENDPOINT"); base && !base->empty()) {
    std::string url = Trim(*base);
    if (url.empty() || url.back() != '/') url += '/';
    s.exporter.endpoint = url + "v1/traces";
  } else {
    return std::nullopt;
  }
  if (auto protocol =
          Either(lookup, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL");
      protocol && *protocol != "http/json" && warn) {
    warn("tracing: only OTLP http/json is sent", {{"protocol", *protocol}});
  }
  // Headers: the general list, then the traces list (which wins for a key in both).
  for (const char* name : {"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}) {
    auto v = lookup(name);
    if (!v) continue;
    std::string bad;
    for (auto& [k, value] : ParseKeyValueList(*v, &bad)) {
      auto& headers = s.exporter.headers;
      std::erase_if(headers, [&k = k](const auto& h) { return Lower(h.first) == Lower(k); });
      headers.emplace_back(k, value);
    }
    if (!bad.empty() && warn) warn("tracing: ignored malformed headers", {{name, bad}});
  }
  // Resource: OTEL_RESOURCE_ATTRIBUTES, with OTEL_SERVICE_NAME taking precedence for
  // service.name (default "agentckpt").
  std::vector<std::pair<std::string, std::string>> attributes;
  if (auto v = lookup("OTEL_RESOURCE_ATTRIBUTES")) {
    std::string bad;
    attributes = ParseKeyValueList(*v, &bad);
    if (!bad.empty() && warn) {
      warn("tracing: ignored malformed resource attributes", {{"OTEL_RESOURCE_ATTRIBUTES", bad}});
    }
  }
  std::string service = "agentckpt";
  for (const auto& [k, v] : attributes) {
    if (k == "service.name") service = v;
  }
  if (auto name = lookup("OTEL_SERVICE_NAME"); name && !Trim(*name).empty()) service = Trim(*name);
  std::erase_if(attributes, [](const auto& a) { return a.first == "service.name"; });
  auto& resource = s.exporter.resource.attributes;
  resource.emplace_back("service.name", service);
  resource.insert(resource.end(), attributes.begin(), attributes.end());
  resource.emplace_back("telemetry.sdk.name", "agentckpt");
  resource.emplace_back("telemetry.sdk.language", "cpp");
  auto traces_timeout = lookup("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT");
  ReadPositive(lookup, warn,
               traces_timeout && !traces_timeout->empty() ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"
                                                          : "OTEL_EXPORTER_OTLP_TIMEOUT",
               &s.batch.export_timeout_ms);
  ReadPositive(lookup, warn, "OTEL_BSP_SCHEDULE_DELAY", &s.batch.schedule_delay_ms);
  ReadPositive(lookup, warn, "OTEL_BSP_MAX_QUEUE_SIZE", &s.batch.max_queue);
  ReadPositive(lookup, warn, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", &s.batch.max_batch);
  return s;
}

std::unique_ptr<Tracer> TracerFromEnvironment(Env* env, const EnvLookup& lookup,
                                              const Reporter& report) {
  auto settings = TracingSettingsFrom(lookup, report);
  if (!settings) return nullptr;
  std::string endpoint = settings->exporter.endpoint;
  auto exporter = NewOtlpHttpExporter(std::move(settings->exporter));
  if (!exporter.ok()) {
    if (report) {
      report("tracing is off: the OTLP endpoint cannot be used",
             {{"endpoint", endpoint}, {"reason", exporter.status().message()}});
    }
    return nullptr;
  }
  return std::make_unique<Tracer>(env, std::move(exporter).value(), settings->batch, report);
}

}  // namespace agentckpt::tracing
