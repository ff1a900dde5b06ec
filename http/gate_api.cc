#include "http/gate_api.h"

#include <charconv>
#include <chrono>
#include <utility>

#include "common/ids.h"
#include "http/request_body.h"
#include "tracing/span.h"

namespace agentckpt {

using nlohmann::json;

namespace {

GateReply Err(int status, const std::string& code, const std::string& message,
              const std::string& field = "") {
  return GateReply{status, {{"error", {{"code", code}, {"message", message}, {"field", field}}}}};
}

// A string member of `j`, "" when absent or not a string.
std::string StringAt(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

// Runs `op` in an agentckpt.gate.<operation> span: the gate's id and state as attributes, an
// answer other than 2xx as its error.
GateReply Traced(const char* operation, const std::function<GateReply()>& op) {
  tracing::Span span = tracing::StartSpan(std::string("agentckpt.gate.") + operation);
  tracing::SpanScope scope(span);
  GateReply r = op();
  if (span.recording()) {
    const json& gate = r.body.is_object() && r.body.contains("gate") ? r.body["gate"] : r.body;
    if (std::string id = StringAt(gate, "gateId"); !id.empty())
      span.SetString("agentckpt.gate.id", id);
    if (std::string state = StringAt(gate, "state"); !state.empty()) {
      span.SetString("agentckpt.gate.state", state);
    }
    if (r.status < 200 || r.status > 299) {
      std::string code =
          r.body.is_object() && r.body.contains("error") ? StringAt(r.body["error"], "code") : "";
      span.SetError("HTTP " + std::to_string(r.status) + (code.empty() ? "" : " " + code));
    }
  }
  return r;
}

}  // namespace

GateApi::GateApi(GateApiDeps deps) : deps_(std::move(deps)) {}

GateReply GateApi::ErrorReply(const Status& status) {
  const std::string& msg = status.message();
  std::string field;
  if (size_t colon = msg.find(": ");
      colon != std::string::npos && msg.substr(0, colon).find(' ') == std::string::npos) {
    field = msg.substr(0, colon);
    if (field == "document" || field == "conflict" || field == "pending") field.clear();
  }
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      return Err(400, "INVALID_ARGUMENT", msg, field);
    case StatusCode::kNotFound:
      return Err(404, "NOT_FOUND", msg, field);
    case StatusCode::kAlreadyExists:
      return Err(409, msg.rfind("conflict", 0) == 0 ? "CONFLICT" : "ALREADY_EXISTS", msg, field);
    case StatusCode::kFailedPrecondition:
      if (msg.rfind("lease lost", 0) == 0) return Err(409, "LEASE_LOST", msg);
      if (msg.rfind("pending", 0) == 0) return Err(409, "NOT_DECIDED", msg);
      return Err(409, "ARGS_MISMATCH", msg, field);
    case StatusCode::kResourceExhausted:
      return Err(409, "TOO_MANY_GATES", msg, field);
    case StatusCode::kUnavailable:
      return Err(503, msg.rfind("standby", 0) == 0 ? "STANDBY" : "UNAVAILABLE", msg);
    default:
      return Err(500, std::string(StatusCodeName(status.code())), msg);
  }
}

std::optional<GateReply> GateApi::Refused() const {
  if (!deps_.may_write) return std::nullopt;
  Status s = deps_.may_write();
  if (s.ok()) return std::nullopt;
  return ErrorReply(s);
}

std::optional<GateReply> GateApi::Finish(const StatusOr<GateUpdate>& u, const std::string& event) {
  if (!u.ok()) return ErrorReply(u.status());
  if (u->changed && deps_.journal != nullptr) {
    auto ack = deps_.journal->Await(u->journal_sequence);
    if (!ack.ok()) return ErrorReply(ack.status());
  }
  if (u->changed && deps_.on_change) deps_.on_change(event, u->gate);
  return std::nullopt;
}

GateReply GateApi::Request(const std::string& body) {
  return Traced("request", [&] { return DoRequest(body); });
}

GateReply GateApi::Resolve(const std::string& body, const std::string& path_gate_id) {
  return Traced("resolve", [&] { return DoResolve(body, path_gate_id); });
}

GateReply GateApi::Consume(const std::string& gate_id) {
  return Traced("consume", [&] { return DoConsume(gate_id); });
}

GateReply GateApi::DoRequest(const std::string& body) {
  auto parsed = ParseRequestBody(body);
  if (!parsed.ok()) return ErrorReply(parsed.status());
  auto in = ParseGateRequest(*parsed);
  if (!in.ok()) return ErrorReply(in.status());
  if (auto refused = Refused()) return *refused;
  std::string generated;
  if (in->gate_id.empty()) {
    auto id = NewUuidV4(deps_.env);
    if (!id.ok()) return ErrorReply(id.status());
    generated = *id;
  }
  auto u =
      deps_.context->RequestGate(*in, deps_.env->NowUnixMillis(), deps_.default_ttl_s, generated);
  if (auto error = Finish(u, "requested")) return *error;
  json gate = GateToJson(u->gate);
  return GateReply{u->changed ? 201 : 200,
                   {{"gateId", u->gate.gate_id},
                    {"state", gate["state"]},
                    {"expiresAt", gate["expiresAt"]},
                    {"gate", gate}}};
}

GateReply GateApi::DoResolve(const std::string& body, const std::string& path_gate_id) {
  auto parsed = ParseRequestBody(body);
  if (!parsed.ok()) return ErrorReply(parsed.status());
  auto r = ParseGateResolution(*parsed, path_gate_id);
  if (!r.ok()) return ErrorReply(r.status());
  if (auto refused = Refused()) return *refused;
  ExpireDue();  // an expiry is announced like any other decision
  auto u = deps_.context->ResolveGate(*r, deps_.env->NowUnixMillis());
  if (!u.ok() && u.status().code() == StatusCode::kAlreadyExists) {
    GateReply conflict = ErrorReply(u.status());
    auto first = deps_.context->GetGate(r->gate_id);
    if (first.ok()) conflict.body["gate"] = GateToJson(*first);
    return conflict;
  }
  if (auto error = Finish(u, "resolved")) return *error;
  return GateReply{200, GateToJson(u->gate)};
}

GateReply GateApi::DoConsume(const std::string& gate_id) {
  if (auto refused = Refused()) return *refused;
  ExpireDue();
  auto u = deps_.context->ConsumeGate(gate_id, deps_.env->NowUnixMillis());
  if (auto error = Finish(u, "consumed")) return *error;
  return GateReply{200, GateToJson(u->gate)};
}

GateReply GateApi::Get(const std::string& gate_id,
                       const std::map<std::string, std::string>& query) {
  int64_t wait_s = 0;
  if (auto it = query.find("waitSeconds"); it != query.end()) {
    const std::string& v = it->second;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), wait_s);
    if (ec != std::errc() || ptr != v.data() + v.size() || wait_s < 0 ||
        wait_s > deps_.max_wait_s) {
      return Err(400, "INVALID_ARGUMENT",
                 "waitSeconds: expected an integer from 0 to " + std::to_string(deps_.max_wait_s),
                 "waitSeconds");
    }
  }
  ExpireDue();
  auto gate = deps_.context->GetGate(gate_id);
  if (!gate.ok()) return ErrorReply(gate.status());
  // Waits for the decision, the end of the wait or the gate's expiry (then expired durably).
  // The wait is on the steady clock and the expiry on the wall clock, so a wake-up a little
  // before expiresAt waits again; bounded by the end of the wait.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
  while (wait_s > 0 && !gate->decision && std::chrono::steady_clock::now() < end) {
    int64_t until_expiry_ms = gate->expires_at_ms - deps_.env->NowUnixMillis();
    // Due but not expired (the journal refused): look again later, not in a busy loop.
    int64_t wait_ms = until_expiry_ms > 0 ? until_expiry_ms : 200;
    auto deadline =
        std::min(end, std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms));
    gate = deps_.context->WaitGate(gate_id, deadline);
    if (!gate.ok()) return ErrorReply(gate.status());
    // Woken early without a decision: the sidecar is shutting down.
    if (!gate->decision && std::chrono::steady_clock::now() < deadline) break;
    if (!gate->decision && ExpireDue() > 0) gate = deps_.context->GetGate(gate_id);
    if (!gate.ok()) return ErrorReply(gate.status());
  }
  // A waiter wakes when the decision is applied, which is before its journal entry is durable:
  // nothing is shown that a crash could still take back.
  if (Status durable = AwaitRecorded(); !durable.ok()) return ErrorReply(durable);
  return GateReply{200, GateToJson(*gate)};
}

Status GateApi::AwaitRecorded() {
  if (deps_.journal == nullptr) return OkStatus();
  return deps_.journal->Await(deps_.journal->head().sequence).status();
}

GateReply GateApi::List(const std::map<std::string, std::string>& query) {
  std::optional<GateState> want;
  if (auto it = query.find("state"); it != query.end()) {
    want = ParseGateState(it->second);
    if (!want) {
      return Err(400, "INVALID_ARGUMENT", "state: expected pending, approved or rejected", "state");
    }
  }
  ExpireDue();
  json list = json::array();
  for (const Gate& g : deps_.context->Gates()) {
    if (!want || g.state == *want) list.push_back(GateToJson(g));
  }
  if (Status durable = AwaitRecorded(); !durable.ok()) return ErrorReply(durable);
  return GateReply{200, {{"gates", list}}};
}

int GateApi::ExpireDue() {
  auto expired = deps_.context->ExpireDueGates(deps_.env->NowUnixMillis());
  if (!expired.ok() || expired->empty()) return 0;
  int n = 0;
  for (const GateUpdate& u : *expired) {
    if (!Finish(u, "resolved")) ++n;
  }
  return n;
}

std::optional<GateReply> RouteGateRequest(GateApi* api, const std::string& method,
                                          const std::string& path,
                                          const std::map<std::string, std::string>& query,
                                          const std::string& body, std::string* allow) {
  static constexpr std::string_view kRoot = "/v1/gates";
  if (path.rfind(kRoot, 0) != 0) return std::nullopt;
  std::string rest = path.substr(kRoot.size());
  auto wrong = [&](const char* methods) {
    *allow = methods;
    return Err(405, "METHOD_NOT_ALLOWED", method + " is not allowed on " + path);
  };
  if (rest.empty()) {
    if (method == "POST") return api->Request(body);
    if (method == "GET") return api->List(query);
    return wrong("GET, POST");
  }
  if (rest[0] != '/') return std::nullopt;
  rest = rest.substr(1);
  size_t slash = rest.find('/');
  std::string id = rest.substr(0, slash);
  if (id.empty()) return std::nullopt;
  if (slash == std::string::npos) {
    if (method == "GET") return api->Get(id, query);
    return wrong("GET");
  }
  std::string action = rest.substr(slash + 1);
  if (action != "resolve" && action != "consume") return std::nullopt;
  if (method != "POST") return wrong("POST");
  return action == "resolve" ? api->Resolve(body, id) : api->Consume(id);
}

}  // namespace agentckpt
