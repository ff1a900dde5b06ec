// The tool-call ledger's endpoints (docs/http-api.md "Tool-call ledger",
// docs/tool-call-ledger.md): begin, end, reconcile and the list.
#include <set>
#include <utility>

#include "checkpoint/ledger_json.h"
#include "common/ids.h"
#include "common/status_macros.h"
#include "common/time_format.h"
#include "http/api_paths.h"
#include "http/api_router.h"
#include "http/request_body.h"
#include "tracing/span.h"

namespace agentckpt {

using nlohmann::json;

namespace {

// The body as an object whose members are all in `known`; kInvalidArgument naming the field.
StatusOr<json> ObjectBody(const std::string& text, const std::set<std::string>& known) {
  ASSIGN_OR_RETURN(json j, ParseRequestBody(text));
  if (!j.is_object()) return InvalidArgumentError("document: expected an object");
  for (const auto& [key, value] : j.items()) {
    if (known.count(key) == 0) return InvalidArgumentError(key + ": unknown field");
  }
  return j;
}

// An optional string member ("" when absent or null).
Status OptionalString(const json& j, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return OkStatus();
  if (!it->is_string()) return InvalidArgumentError(std::string(key) + ": expected a string");
  *out = it->get<std::string>();
  return OkStatus();
}

Status RequiredString(const json& j, const char* key, std::string* out) {
  if (!j.contains(key)) return InvalidArgumentError(std::string(key) + ": missing field");
  return OptionalString(j, key, out);
}

json ResultJson(const LedgerResult& r) {
  json j = {{"success", r.success},
            {"outputSummary", r.output_summary},
            {"durationMs", r.duration_ms},
            {"reconciled", r.reconciled}};
  if (!r.external_id.empty()) j["externalId"] = r.external_id;
  return j;
}

}  // namespace

Status ApiRouter::LedgerDurable(const ContextUpdate& update, json* body) {
  if (Status s = AwaitDurable(update, body); !s.ok()) return s;
  const bool memory =
      deps_.journal != nullptr && deps_.journal->durability() == Durability::kMemory;
  if (!memory || deps_.writer == nullptr) return OkStatus();
  auto written = deps_.writer->Write(TriggerReason::kManual);
  if (!written.ok()) {
    return UnavailableError("the tool-call record could not be made durable: " +
                            written.status().ToString());
  }
  (*body)["durable"] = true;
  (*body)["checkpointSequence"] = written->sequence_number;
  return OkStatus();
}

ApiResponse ApiRouter::ToolCallRoute(const ApiRequest& req) {
  if (req.method == "GET") return ListToolCalls(req);
  std::string rest = req.path.substr(sizeof(api_paths::kToolCallsPrefix) - 1);
  size_t slash = rest.find('/');
  const bool begin = rest == "begin";
  // agentckpt.ledger.begin, .end or .reconcile; an answer other than 2xx is its error.
  tracing::Span span = tracing::StartSpan("agentckpt.ledger." +
                                          (begin ? std::string("begin") : rest.substr(slash + 1)));
  tracing::SpanScope scope(span);
  span.SetString("gen_ai.agent.id", deps_.agent_id);
  ApiResponse r = begin ? BeginToolCall(req)
                        : FinishToolCall(rest.substr(0, slash), rest.substr(slash + 1), req);
  if (span.recording()) {
    json body = json::parse(r.body, nullptr, false);
    if (body.is_object() && body.contains("callId") && body["callId"].is_string()) {
      span.SetString("gen_ai.tool.call.id", body["callId"].get<std::string>());
    } else if (!begin) {
      span.SetString("gen_ai.tool.call.id", rest.substr(0, slash));
    }
    if (r.status < 200 || r.status > 299) {
      const json* error = body.is_object() && body.contains("error") ? &body["error"] : nullptr;
      std::string code = error != nullptr && error->is_object() && error->contains("code") &&
                                 (*error)["code"].is_string()
                             ? (*error)["code"].get<std::string>()
                             : "";
      span.SetError("HTTP " + std::to_string(r.status) + (code.empty() ? "" : " " + code));
    }
  }
  return r;
}

ApiResponse ApiRouter::BeginToolCall(const ApiRequest& req) {
  auto body =
      ObjectBody(req.body, {"toolName", "effect", "idempotencyKey", "argsSha256", "inputSummary"});
  if (!body.ok()) return FromStatus(body.status());
  ToolCallBegin b;
  std::string effect;
  for (Status s :
       {RequiredString(*body, "toolName", &b.tool_name), RequiredString(*body, "effect", &effect),
        OptionalString(*body, "idempotencyKey", &b.idempotency_key),
        OptionalString(*body, "argsSha256", &b.args_sha256),
        OptionalString(*body, "inputSummary", &b.input_summary)}) {
    if (!s.ok()) return FromStatus(s);
  }
  auto parsed = ParseToolEffect(effect);
  if (!parsed) {
    return Error(400, "INVALID_ARGUMENT",
                 "effect: expected pure, read, idempotent or write, got \"" + effect + "\"",
                 "effect");
  }
  b.effect = *parsed;
  Env* env = deps_.env != nullptr ? deps_.env : Env::Default();
  auto call_id = NewUuidV4(env);
  if (!call_id.ok()) return FromStatus(call_id.status());
  auto begun = deps_.context->BeginToolCall(std::move(b), *call_id, env->NowUnixMillis());
  if (!begun.ok()) return MutationError(begun.status());
  const LedgerCall& call = begun->call;
  switch (begun->kind) {
    case ToolCallBeginResult::Kind::kReplayed:
      CountLedger("begin", "replayed");
      // Nothing was recorded: the stored result answers, without a store write.
      return Json(200, {{"callId", call.call_id},
                        {"idempotencyKey", call.idempotency_key},
                        {"state", "completed"},
                        {"replayed", true},
                        {"result", ResultJson(*call.result)}});
    case ToolCallBeginResult::Kind::kOpen: {
      CountLedger("begin", "outcome_unknown");
      ApiResponse r = Error(409, "OUTCOME_UNKNOWN",
                            "tool call " + call.call_id + " with this key was begun at " +
                                FormatRfc3339Millis(call.began_at_ms) +
                                " and never ended: verify its effect, then reconcile it "
                                "(POST /v1/tool-calls/" +
                                call.call_id + "/reconcile)");
      json j = json::parse(r.body);
      json detail = LedgerCallToJsonValue(call);
      detail.erase("result");
      detail.erase("endedAt");
      j.update(detail);
      j["code"] = "OUTCOME_UNKNOWN";
      return Json(409, j);
    }
    case ToolCallBeginResult::Kind::kStarted:
      break;
  }
  json reply = {{"callId", call.call_id},
                {"idempotencyKey", call.idempotency_key},
                {"state", "started"},
                {"revision", begun->update.revision}};
  if (Status durable = LedgerDurable(begun->update, &reply); !durable.ok()) {
    return MutationError(durable);
  }
  CountLedger("begin", "started");
  return Json(201, reply);
}

ApiResponse ApiRouter::FinishToolCall(const std::string& call_id, const std::string& action,
                                      const ApiRequest& req) {
  Env* env = deps_.env != nullptr ? deps_.env : Env::Default();
  const bool end = action == "end";
  auto body = end ? ObjectBody(req.body, {"success", "outputSummary", "durationMs", "externalId"})
                  : ObjectBody(req.body, {"outcome", "outputSummary", "note"});
  if (!body.ok()) return FromStatus(body.status());
  std::string summary, extra;
  if (Status s = OptionalString(*body, "outputSummary", &summary); !s.ok()) return FromStatus(s);
  json reply = {{"callId", call_id}};
  StatusOr<ContextUpdate> update = InternalError("unreachable");
  if (end) {
    auto ok = body->find("success");
    if (ok == body->end() || !ok->is_boolean()) {
      return Error(400, "INVALID_ARGUMENT", "success: expected a boolean", "success");
    }
    int64_t duration = 0;
    if (auto d = body->find("durationMs"); d != body->end() && !d->is_null()) {
      if (!d->is_number_integer() || d->get<int64_t>() < 0) {
        return Error(400, "INVALID_ARGUMENT", "durationMs: expected an integer >= 0", "durationMs");
      }
      duration = d->get<int64_t>();
    }
    if (Status s = OptionalString(*body, "externalId", &extra); !s.ok()) return FromStatus(s);
    LedgerResult result{ok->get<bool>(), summary, duration, extra, false};
    update = deps_.context->EndToolCall(call_id, std::move(result), env->NowUnixMillis(), nullptr);
    reply["state"] = "completed";
  } else {
    std::string outcome_name;
    if (Status s = RequiredString(*body, "outcome", &outcome_name); !s.ok()) return FromStatus(s);
    if (Status s = OptionalString(*body, "note", &extra); !s.ok()) return FromStatus(s);
    auto outcome = ParseReconcileOutcome(outcome_name);
    if (!outcome) {
      return Error(
          400, "INVALID_ARGUMENT",
          "outcome: expected succeeded, failed or not_executed, got \"" + outcome_name + "\"",
          "outcome");
    }
    update =
        deps_.context->ReconcileToolCall(call_id, *outcome, summary, extra, env->NowUnixMillis());
    const bool freed = *outcome == ReconcileOutcome::kNotExecuted;
    reply["outcome"] = outcome_name;
    reply["state"] = freed ? "removed" : "completed";
    reply["keyFreed"] = freed;
  }
  if (!update.ok()) {
    if (update.status().code() == StatusCode::kAlreadyExists) {
      return Error(409, "ALREADY_COMPLETED", update.status().message());
    }
    return MutationError(update.status());
  }
  reply["revision"] = update->revision;
  if (Status durable = LedgerDurable(*update, &reply); !durable.ok()) {
    return MutationError(durable);
  }
  CountLedger(action, end ? (body->at("success").get<bool>() ? "success" : "failure")
                          : reply["outcome"].get<std::string>());
  return Json(200, reply);
}

ApiResponse ApiRouter::ListToolCalls(const ApiRequest& req) {
  std::vector<LedgerCallState> states = {
      LedgerCallState::kStarted, LedgerCallState::kOutcomeUnknown, LedgerCallState::kCompleted};
  if (auto it = req.query.find("state"); it != req.query.end()) {
    auto state = ParseLedgerCallState(it->second);
    if (!state) {
      return Error(400, "INVALID_ARGUMENT", "state: expected started, outcome_unknown or completed",
                   "state");
    }
    states = {*state};
  }
  json calls = json::array();
  for (LedgerCallState state : states) {
    for (const LedgerCall& c : deps_.context->ToolCalls(state)) {
      calls.push_back(LedgerCallToJsonValue(c));
    }
  }
  // As GET /v1/context: only what is durable is shown.
  if (deps_.journal != nullptr) {
    if (Status durable = deps_.journal->AwaitRecorded(); !durable.ok())
      return MutationError(durable);
  }
  return Json(200, {{"calls", std::move(calls)}});
}

}  // namespace agentckpt
