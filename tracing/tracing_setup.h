// The tracer from the standard OpenTelemetry environment variables (docs/tracing.md):
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is) or OTEL_EXPORTER_OTLP_ENDPOINT (+ "/v1/traces"),
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_(TRACES_)HEADERS and
// _TIMEOUT, OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
// OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER. Tracing is off when no endpoint is set.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/env.h"
#include "tracing/otlp_http_exporter.h"
#include "tracing/tracer.h"

namespace agentckpt::tracing {

// Reads a variable: its value, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
// Where warnings go (a message and JSON fields).
using Reporter = std::function<void(const std::string& message, const nlohmann::json& fields)>;

struct TracingSettings {
  OtlpHttpOptions exporter;
  BatchOptions batch;
};

// The settings the variables ask for; nullopt when tracing is off (no endpoint, or
// OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER other than "otlp"). A value that cannot be
// used is reported through `warn` and its default kept, as the OpenTelemetry specification asks
// (tracing never stops the sidecar). Pure apart from `lookup` and `warn`.
std::optional<TracingSettings> TracingSettingsFrom(const EnvLookup& lookup, const Reporter& warn);

// "k1=v1,k2=v2" (values percent-decoded, blanks around keys and values trimmed), as
// OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS write them. Entries without '=' or
// with an empty key are skipped and named in `*bad`. Pure.
std::vector<std::pair<std::string, std::string>> ParseKeyValueList(const std::string& text,
                                                                   std::string* bad);

// A started tracer for the settings the variables of `lookup` ask for, or null when tracing is
// off or the endpoint cannot be used (reported through `report`, which also receives the
// tracer's own reports). `env` must outlive the tracer.
std::unique_ptr<Tracer> TracerFromEnvironment(Env* env, const EnvLookup& lookup,
                                              const Reporter& report);

}  // namespace agentckpt::tracing
