// OtlpHttpExporter: sends span batches to an OpenTelemetry collector as OTLP/JSON over HTTP/1.1
// (POST <endpoint>, Content-Type application/json).
//
// Why a small exporter of our own: Debian packages no opentelemetry-cpp, and the project builds
// from Debian packages only; OTLP/JSON over HTTP needs nothing beyond what the sidecar already
// links (Boost.Beast, as the HTTP server, and nlohmann/json). Plain http:// endpoints only: the
// usual setup is a collector or agent beside the pod (e.g. http://localhost:4318).
// Library exceptions never leave this file.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "tracing/otlp_json.h"
#include "tracing/tracer.h"

namespace agentckpt::tracing {

// An http:// URL taken apart.
struct HttpUrl {
  std::string host;    // name or address ("[::1]" keeps its brackets out: "::1")
  std::string port;    // "80" when not given
  std::string target;  // path and query, "/" when empty
};

// Parses "http://host[:port][/path]". kInvalidArgument naming what is wrong (https and other
// schemes, no host, a bad port). Pure, thread-safe.
StatusOr<HttpUrl> ParseHttpUrl(const std::string& url);

struct OtlpHttpOptions {
  std::string endpoint;  // the full URL, e.g. http://localhost:4318/v1/traces
  std::vector<std::pair<std::string, std::string>> headers;  // extra request headers
  OtlpResource resource;
};

// A SpanExporter posting each batch once (no retry): OK on a 2xx answer; kUnavailable when the
// collector cannot be reached or answers otherwise, kDeadlineExceeded at the deadline or on
// cancellation. kInvalidArgument if the endpoint does not parse.
StatusOr<std::unique_ptr<SpanExporter>> NewOtlpHttpExporter(OtlpHttpOptions options);

}  // namespace agentckpt::tracing
