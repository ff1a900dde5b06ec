#include "console/console_api.h"

#include <exception>
#include <memory>

#include "cli/gate_resolve.h"
#include "cli/gate_store.h"
#include "cli/restore_dry_run.h"
#include "common/env.h"
#include "common/ids.h"
#include "common/json_member.h"
#include "console/console_assets.h"
#include "console/console_views.h"
#include "gate/gate_record.h"
#include "http/api_router.h"
#include "observability/json_log.h"

namespace agentckpt {
namespace {

using nlohmann::json;

constexpr char kApi[] = "/api/";
constexpr char kAgents[] = "/api/agents/";

ApiResponse Reply(const StatusOr<json>& r) {
  return r.ok() ? ApiRouter::Json(200, *r) : ApiRouter::FromStatus(r.status());
}

ApiResponse MethodNotAllowed(const std::string& allow) {
  ApiResponse r = ApiRouter::Error(405, "METHOD_NOT_ALLOWED", "allowed: " + allow);
  r.headers["Allow"] = allow;
  return r;
}

// The HTTP status of a refusal the sidecar answered ({"error":{"code",...}}).
int RefusalStatus(const std::string& code) {
  if (code == "NOT_FOUND") return 404;
  if (code == "CONFLICT" || code == "ARGS_MISMATCH" || code == "ALREADY_EXISTS") return 409;
  if (code == "STANDBY" || code == "UNAVAILABLE") return 503;
  return 400;
}

}  // namespace

ConsoleApi::ConsoleApi(CheckpointStore* store, ConsoleOptions options)
    : store_(store),
      options_(std::move(options)),
      auth_(options_.bearer_token),
      fleet_(store, options_.fleet_row_max_age_ms) {}

bool ConsoleApi::Authorized(const ApiRequest& request) const {
  // The page and its assets hold no data; /api/session says whether a token is needed and
  // whether the one given is right (what a refusal would say too).
  if (request.path.rfind(kApi, 0) != 0 || request.path == "/api/session") return true;
  return auth_.Allows(request.authorization);
}

ApiResponse ConsoleApi::Handle(const ApiRequest& request) {
  ApiResponse r;
  if (!Authorized(request)) {
    r = ApiRouter::Error(401, "UNAUTHENTICATED",
                         "missing or wrong bearer token (Authorization: Bearer ...)");
    r.headers["WWW-Authenticate"] = "Bearer";
  } else {
    try {
      r = Route(request);
    } catch (const std::exception& e) {
      r = ApiRouter::Error(500, "INTERNAL", std::string("unexpected error: ") + e.what());
    }
  }
  r.headers["Cache-Control"] = "no-store";
  r.headers["X-Content-Type-Options"] = "nosniff";
  if (r.status >= 400) {
    LogWarn("console request refused",
            {{"method", request.method}, {"path", request.path}, {"status", r.status}});
  }
  return r;
}

ApiResponse ConsoleApi::Route(const ApiRequest& request) {
  const std::string& p = request.path;
  if (p.rfind(kApi, 0) != 0) {
    if (request.method != "GET" && request.method != "HEAD") return MethodNotAllowed("GET");
    const ConsoleAsset* asset = FindConsoleAsset(p == "/" ? "/index.html" : p);
    if (asset == nullptr) return ApiRouter::Error(404, "NOT_FOUND", "no page " + p);
    ApiResponse r;
    r.content_type = asset->content_type;
    r.body.assign(asset->data, asset->size);
    r.headers["Content-Security-Policy"] =
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'";
    return r;
  }
  if (p == "/api/session") {
    if (request.method != "GET") return MethodNotAllowed("GET");
    return ApiRouter::Json(200, {{"tokenRequired", auth_.enabled()},
                                 {"authorized", auth_.Allows(request.authorization)}});
  }
  if (p == "/api/fleet") {
    if (request.method != "GET") return MethodNotAllowed("GET");
    return Reply(fleet_.View(Env::Default()->NowUnixMillis()));
  }
  if (p.rfind(kAgents, 0) == 0) {
    std::string rest = p.substr(sizeof(kAgents) - 1);
    size_t slash = rest.find('/');
    std::string agent = rest.substr(0, slash);
    if (Status bad = ValidateAgentId(agent); !bad.ok()) {
      return ApiRouter::Error(400, "INVALID_ARGUMENT", "agent: " + bad.message(), "agent");
    }
    return Agent(request, agent, slash == std::string::npos ? "" : rest.substr(slash + 1));
  }
  return ApiRouter::Error(404, "NOT_FOUND", "no endpoint " + p);
}

ApiResponse ConsoleApi::Agent(const ApiRequest& request, const std::string& agent,
                              const std::string& rest) {
  const bool get = request.method == "GET";
  auto query = [&](const char* key) {
    auto it = request.query.find(key);
    return it == request.query.end() ? std::string() : it->second;
  };
  if (rest == "timeline") return get ? Reply(TimelineView(store_, agent)) : MethodNotAllowed("GET");
  if (rest.rfind("checkpoints/", 0) == 0 && rest.size() > 12) {
    if (!get) return MethodNotAllowed("GET");
    return Reply(CheckpointView(store_, agent, rest.substr(12)));
  }
  if (rest == "diff") {
    if (!get) return MethodNotAllowed("GET");
    if (query("from").empty() || query("to").empty()) {
      return ApiRouter::Error(400, "INVALID_ARGUMENT", "from and to are required", "from");
    }
    return Reply(DiffView(store_, agent, query("from"), query("to")));
  }
  if (rest == "restore-preview") return get ? Preview(agent) : MethodNotAllowed("GET");
  if (rest == "gates") return get ? Gates(agent) : MethodNotAllowed("GET");
  if (rest.rfind("gates/", 0) == 0) {
    std::string tail = rest.substr(6);
    size_t slash = tail.find('/');
    if (slash != std::string::npos && tail.substr(slash + 1) == "resolve") {
      if (request.method != "POST") return MethodNotAllowed("POST");
      return Decide(request, agent, tail.substr(0, slash));
    }
  }
  return ApiRouter::Error(404, "NOT_FOUND", "no endpoint " + request.path);
}

ApiResponse ConsoleApi::Preview(const std::string& agent) {
  NatsConnectionPtr nc;
  if (options_.replay) {
    auto connected = ConnectNats(options_.nats, "agentckpt console (restore preview)");
    if (!connected.ok()) return ApiRouter::FromStatus(connected.status());
    nc = std::move(connected).value();
  }
  DryRunRequest request{agent, options_.restore, nc.get(), options_.nats.timeout_ms, "", "",
                        nullptr};
  auto result = RunRestoreDryRun(store_, request);
  if (!result.ok()) return ApiRouter::FromStatus(result.status());
  json j = RestoreDryRunJson(agent, *result, options_.replay);
  j["promptMaxTokens"] = options_.restore.prompt_max_tokens;
  j["tokenizer"] = options_.restore.tokenizer;
  return ApiRouter::Json(200, j);
}

ApiResponse ConsoleApi::Gates(const std::string& agent) {
  auto gates = LoadGatesFromStore(store_, agent);
  if (!gates.ok()) return ApiRouter::FromStatus(gates.status());
  json out = json::array();
  for (const Gate& g : *gates) out.push_back(GateToJson(g));
  return ApiRouter::Json(200, {{"agentId", agent}, {"gates", out}});
}

ApiResponse ConsoleApi::Decide(const ApiRequest& request, const std::string& agent,
                               const std::string& gate_id) {
  json in = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!in.is_object()) {
    return ApiRouter::Error(400, "INVALID_ARGUMENT", "document: not a JSON object");
  }
  json body = {{"gateId", gate_id}};
  for (const char* key : {"decision", "by", "argsSha256"}) {
    if (in.contains(key)) body[key] = in[key];
  }
  if (in.contains("comment")) {
    if (!in["comment"].is_string()) {
      return ApiRouter::Error(400, "INVALID_ARGUMENT", "comment: not a string", "comment");
    }
    if (!in["comment"].get<std::string>().empty()) body["response"] = {{"comment", in["comment"]}};
  }
  auto decided = DecideGate(options_.nats, agent, body, options_.decision_store);
  if (!decided.ok()) {
    const Status& st = decided.status();
    // The rules' refusals (argsSha256, a store without a journal) are conflicts with the state.
    if (st.code() == StatusCode::kFailedPrecondition) {
      return ApiRouter::Error(409, "FAILED_PRECONDITION", st.message());
    }
    return ApiRouter::FromStatus(st);
  }
  json out = decided->result;
  out["via"] = decided->via;
  if (out.contains("error")) {
    const std::string code = JsonMemberOr(out["error"], "code", std::string());
    return ApiRouter::Json(RefusalStatus(code), out);
  }
  LogInfo("console gate decision",
          {{"agentId", agent}, {"gateId", gate_id}, {"decision", body.value("decision", "")},
           {"by", body.value("by", "")}, {"via", decided->via}});
  return ApiRouter::Json(200, out);
}

}  // namespace agentckpt
