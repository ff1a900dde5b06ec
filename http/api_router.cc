#include "http/api_router.h"

#include <optional>
#include <string_view>
#include <utility>

#include "checkpoint/json_value.h"
#include "http/api_paths.h"
#include "http/request_body.h"
#include "tracing/span.h"

namespace agentckpt {

using nlohmann::json;

namespace {

using api_paths::AllowedMethods;
using api_paths::kCheckpointsPrefix;
using api_paths::kToolCallsPrefix;
using api_paths::MethodLabel;
using api_paths::RouteTemplate;

ApiResponse JsonResponse(int status, const json& body) { return ApiRouter::Json(status, body); }

}  // namespace

ApiResponse ApiRouter::Json(int status, const json& body) {
  ApiResponse r;
  r.status = status;
  r.body = DumpJsonValue(body);
  return r;
}

ApiRouter::ApiRouter(ApiDeps deps) : deps_(std::move(deps)), auth_(deps_.bearer_token) {}

bool ApiRouter::Authorized(const ApiRequest& request) const {
  const std::string& p = request.path;
  if (p == "/healthz" || p == "/readyz" || p == "/metrics") return true;
  return auth_.Allows(request.authorization);
}

ApiResponse ApiRouter::Error(int status, const std::string& code, const std::string& message,
                             const std::string& field) {
  return JsonResponse(status,
                      {{"error", {{"code", code}, {"message", message}, {"field", field}}}});
}

ApiResponse ApiRouter::FromStatus(const Status& status) {
  std::string code(StatusCodeName(status.code()));
  switch (status.code()) {
    case StatusCode::kInvalidArgument: {
      const std::string& msg = status.message();
      size_t colon = msg.find(": ");
      std::string field = colon == std::string::npos ? "" : msg.substr(0, colon);
      if (field == "document" || field.find(' ') != std::string::npos) field.clear();
      return Error(400, code, msg, field);
    }
    case StatusCode::kNotFound:
      return Error(404, code, status.message());
    case StatusCode::kAlreadyExists:
      return Error(409, code, status.message());
    case StatusCode::kResourceExhausted:
      return Error(413, code, status.message());
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return Error(503, code, status.message());
    default:
      return Error(500, code, status.message());
  }
}

ApiResponse ApiRouter::Handle(const ApiRequest& request) {
  const std::string& p = request.path;
  if (p == "/healthz" || p == "/readyz" || p == "/metrics") return Answer(request);  // probes
  tracing::TraceContext parent;
  if (auto remote = tracing::ParseTraceparent(request.traceparent)) parent = *remote;
  const std::string route = RouteTemplate(p);
  tracing::Span span = tracing::StartSpanWithParent(request.method + " " + route,
                                                    tracing::SpanKind::kServer, parent);
  tracing::SpanScope scope(span);
  span.SetString("http.request.method", request.method);
  span.SetString("http.route", route);
  span.SetString("url.path", p);
  span.SetString("gen_ai.agent.id", deps_.agent_id);
  ApiResponse r = Answer(request);
  span.SetInt("http.response.status_code", r.status);
  // A server span is an error for 5xx answers only (OpenTelemetry's HTTP conventions).
  if (r.status >= 500) span.SetError("HTTP " + std::to_string(r.status));
  return r;
}

ApiResponse ApiRouter::Answer(const ApiRequest& request) {
  Env* env = deps_.env != nullptr ? deps_.env : Env::Default();
  const int64_t start = env->NowMonotonicMicros();
  ApiResponse r;
  if (!Authorized(request)) {
    r = Error(401, "UNAUTHENTICATED", "missing or wrong bearer token (Authorization: Bearer ...)");
    r.headers["WWW-Authenticate"] = "Bearer";
  } else if (static_cast<int64_t>(request.body.size()) > deps_.body_max_bytes) {
    r = Error(413, "PAYLOAD_TOO_LARGE",
              "request body exceeds " + std::to_string(deps_.body_max_bytes) + " bytes");
  } else {
    try {
      r = Route(request);
    } catch (const std::exception& e) {
      r = Error(500, "INTERNAL", std::string("unexpected error: ") + e.what());
    }
  }
  if (deps_.metrics != nullptr) {
    deps_.metrics->CountHttpRequest(r.status);
    deps_.metrics->ObserveHttpRequest(MethodLabel(request.method), RouteTemplate(request.path),
                                      static_cast<double>(env->NowMonotonicMicros() - start) / 1e6);
  }
  return r;
}

ApiResponse ApiRouter::Route(const ApiRequest& req) {
  const std::string& p = req.path;
  const std::string& m = req.method;
  if (deps_.gates != nullptr) {
    std::string allow;
    if (auto reply = RouteGateRequest(deps_.gates, m, p, req.query, req.body, &allow)) {
      ApiResponse r = JsonResponse(reply->status, reply->body);
      if (!allow.empty()) r.headers["Allow"] = allow;
      if (reply->status == 503) {
        if (reply->body["error"].value("code", "") == "STANDBY") {
          return MutationError(UnavailableError(reply->body["error"].value("message", "")));
        }
        r.headers["Retry-After"] = std::to_string(deps_.retry_after_s);
      }
      return r;
    }
  }
  std::string allowed = AllowedMethods(p);
  if (allowed.empty()) return Error(404, "NOT_FOUND", "no such endpoint: " + p);

  if (p == "/healthz" && m == "GET") return JsonResponse(200, {{"status", "ok"}});
  if (p == "/readyz" && m == "GET") return Readiness();
  if (p == "/metrics" && m == "GET") {
    ApiResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = deps_.metrics->Render();
    return r;
  }
  if (p == "/v1/context") {
    if (m == "GET") {
      // A standby (or fenced) sidecar's context is not the agent's: say so rather than answer
      // with an empty or stale one.
      if (deps_.journal != nullptr) {
        if (Status serving = deps_.journal->Serving(); !serving.ok()) {
          return MutationError(serving);
        }
      }
      // Only what is durable is shown: a change still being appended is waited for, so a reader
      // never acts on a state that a SIGKILL would take back.
      json shown = deps_.context->ToJson();
      if (deps_.journal != nullptr) {
        if (Status durable = deps_.journal->AwaitRecorded(); !durable.ok()) {
          return MutationError(durable);
        }
      }
      return JsonResponse(200, shown);
    }
    if (m == "PUT" || m == "PATCH") {
      auto body = ParseRequestBody(req.body);
      if (!body.ok()) return FromStatus(body.status());
      return ContextUpdateResponse(m == "PUT" ? deps_.context->Replace(*body)
                                              : deps_.context->MergePatch(*body));
    }
  }
  if ((p == "/v1/tool-calls" && m == "GET") || (p.rfind(kToolCallsPrefix, 0) == 0 && m == "POST")) {
    return ToolCallRoute(req);
  }
  if (p == "/v1/tool-calls" && m == "POST") {
    auto body = ParseRequestBody(req.body);
    if (!body.ok()) return FromStatus(body.status());
    auto update = deps_.context->AppendToolCall(*body);
    if (!update.ok()) return MutationError(update.status());
    json reply = {{"revision", update->revision}, {"toolCallLogSize", update->tool_call_log_size}};
    if (Status durable = AwaitDurable(*update, &reply); !durable.ok()) {
      return MutationError(durable);
    }
    return JsonResponse(201, reply);
  }
  if (p == "/v1/checkpoints") {
    if (m == "POST") return PostCheckpoint(req);
    if (m == "GET") return ListCheckpoints(req);
  }
  if (p.rfind(kCheckpointsPrefix, 0) == 0 && m == "GET") {
    return GetCheckpoint(p.substr(sizeof(kCheckpointsPrefix) - 1));
  }
  if ((p == "/v1/restore" || p == "/v1/agent-start") && m == "POST") {
    const auto& run = p == "/v1/restore" ? deps_.restore.run : deps_.restore.agent_start;
    if (!run) return Error(503, "UNAVAILABLE", "restore is not available");
    auto result = run();
    if (!result.ok()) return FromStatus(result.status());
    return JsonResponse(200, *result);
  }
  if (p == "/v1/restoration" && m == "GET") {
    if (!deps_.restore.last) return Error(503, "UNAVAILABLE", "restore is not available");
    auto result = deps_.restore.last();
    if (!result.ok()) return FromStatus(result.status());
    return JsonResponse(200, *result);
  }
  ApiResponse r = Error(405, "METHOD_NOT_ALLOWED", m + " is not allowed on " + p);
  r.headers["Allow"] = allowed;
  return r;
}

ApiResponse ApiRouter::MutationError(const Status& status) {
  const std::string& msg = status.message();
  if (status.code() == StatusCode::kUnavailable && msg.rfind("standby", 0) == 0) {
    ApiResponse r = Error(503, "STANDBY", msg);
    json lease = deps_.lease_info ? deps_.lease_info() : json::object();
    json body = json::parse(r.body);
    // The detail is LeaseHeldMessage's "lease held by H (epoch N) until T".
    std::string detail = lease.value("detail", "");
    std::string holder;
    static constexpr std::string_view kHeld = "lease held by ";
    if (detail.rfind(kHeld, 0) == 0) {
      holder = detail.substr(kHeld.size(), detail.find(" (epoch") - kHeld.size());
    }
    body["error"]["holder"] = holder;
    body["error"]["lease"] = lease;
    r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    r.headers["Retry-After"] = std::to_string(deps_.retry_after_s);
    return r;
  }
  if (status.code() == StatusCode::kFailedPrecondition && msg.rfind("lease lost", 0) == 0) {
    return Error(409, "LEASE_LOST", msg);
  }
  return FromStatus(status);
}

Status ApiRouter::AwaitDurable(const ContextUpdate& update, json* body) {
  if (deps_.journal == nullptr) return OkStatus();
  auto ack = deps_.journal->Await(update.journal_sequence);
  if (!ack.ok()) return ack.status();
  (*body)["journalSequence"] = ack->sequence;
  (*body)["durable"] = ack->durable;
  return OkStatus();
}

ApiResponse ApiRouter::ContextUpdateResponse(const StatusOr<ContextUpdate>& update) {
  if (!update.ok()) return MutationError(update.status());
  json body = {
      {"revision", update->revision}, {"changed", update->changed}, {"checkpoint", nullptr}};
  if (Status durable = AwaitDurable(*update, &body); !durable.ok()) return MutationError(durable);
  if (update->phase_changed) {
    auto written = deps_.writer->Write(TriggerReason::kTaskPhaseChange);
    if (written.ok()) {
      body["checkpoint"] = written->ToJson();
    } else {
      body["checkpointError"] = written.status().ToString();
    }
  }
  return JsonResponse(200, body);
}

ApiResponse ApiRouter::Readiness() {
  json state = deps_.readiness ? deps_.readiness() : json{{"ready", true}};
  bool ready = state.value("ready", false);
  return JsonResponse(ready ? 200 : 503, state);
}

}  // namespace agentckpt
