// ApiRouter: the sidecar's local HTTP/JSON API (docs/http-api.md), independent of the HTTP
// server library: a request in, a response out.
//
// Errors are JSON {"error":{"code","message","field"}}: 400 for a malformed or invalid body
// (field = the path of the offending field), 404, 405 (with an Allow header), 409 on a
// checkpoint conflict, 413 for a body over the limit, 500, and 503 when a dependency (store,
// restore) is unavailable, and 401 without the bearer token when one is configured. A rejected
// request never changes the context. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/env.h"
#include "common/status.h"
#include "context/checkpoint_writer.h"
#include "context/context_state.h"
#include "context/journal_writer.h"
#include "http/gate_api.h"
#include "http/http_handler.h"
#include "observability/metrics.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

// The restore operations, provided by the restore part when it is built in. An empty function
// makes its endpoint answer 503 UNAVAILABLE.
struct RestoreHooks {
  // Runs a restore now that never changes the agent's working tree (POST /v1/restore); the JSON
  // of the result (prompt and metadata).
  std::function<StatusOr<nlohmann::json>()> run;
  // The agent's own start (POST /v1/agent-start): a restore that may stash uncommitted changes
  // the checkpoint does not account for; the same JSON.
  std::function<StatusOr<nlohmann::json>()> agent_start;
  // The last restoration's JSON; kNotFound when none has run.
  std::function<StatusOr<nlohmann::json>()> last;
};

struct ApiDeps {
  std::string agent_id;
  ContextState* context = nullptr;
  CheckpointWriter* writer = nullptr;
  CheckpointStore* store = nullptr;
  Metrics* metrics = nullptr;
  int64_t body_max_bytes = 1 << 20;
  // When not empty, every endpoint but /healthz, /readyz and /metrics requires
  // "Authorization: Bearer <bearer_token>" and answers 401 UNAUTHENTICATED (with
  // "WWW-Authenticate: Bearer") otherwise. Compared in constant time.
  std::string bearer_token;
  // {"ready": bool, ...details}; GET /readyz answers 200 when ready, else 503.
  std::function<nlohmann::json()> readiness;
  RestoreHooks restore;
  // When set, a mutation's reply waits for its journal entry (sync mode) and carries
  // "journalSequence" and "durable" (docs/journal.md).
  JournalWriter* journal = nullptr;
  // The writer lease as LeaseKeeper::Describe shows it, for 503 STANDBY replies (may be empty).
  std::function<nlohmann::json()> lease_info;
  int retry_after_s = 1;  // Retry-After of a 503 STANDBY reply
  // The clock and the call ids of the tool-call ledger; null uses Env::Default().
  Env* env = nullptr;
  // The approval gates (/v1/gates...; docs/gates.md); null: those paths answer 404.
  GateApi* gates = nullptr;
};

class ApiRouter : public HttpHandler {
 public:
  explicit ApiRouter(ApiDeps deps);

  // Answers one request, in a server span (tracing on; not for /healthz, /readyz, /metrics)
  // whose parent is the request's traceparent. Never throws.
  ApiResponse Handle(const ApiRequest& request) override;

  // True if `request` may proceed: no token is configured, the path is open (/healthz, /readyz,
  // /metrics) or its Authorization header carries the token. The body is not looked at, so the
  // server can ask before reading it.
  bool Authorized(const ApiRequest& request) const override;

  // Builds the JSON error response used by every endpoint (also by the HTTP server for
  // requests it rejects itself, e.g. 413 before reading the body).
  static ApiResponse Error(int status, const std::string& code, const std::string& message,
                           const std::string& field = "");
  // The response for a non-ok Status: kInvalidArgument -> 400 with the field path taken from
  // the message prefix, kNotFound -> 404, kAlreadyExists -> 409, kResourceExhausted -> 413,
  // kUnavailable -> 503, others -> 500.
  static ApiResponse FromStatus(const Status& status);
  // A JSON response with `status` and `body`.
  static ApiResponse Json(int status, const nlohmann::json& body);

 private:
  // Handle without the span.
  ApiResponse Answer(const ApiRequest& request);
  ApiResponse Route(const ApiRequest& request);
  ApiResponse ContextUpdateResponse(const StatusOr<ContextUpdate>& update);
  // The reply to a refused or undurable mutation: 503 STANDBY (with the lease holder and
  // Retry-After) on standby, 409 LEASE_LOST once fenced, else as FromStatus.
  ApiResponse MutationError(const Status& status);
  // Waits for the journal (when configured) and adds journalSequence and durable to `body`;
  // a non-OK status when the change could not be made durable.
  Status AwaitDurable(const ContextUpdate& update, nlohmann::json* body);
  // The checkpoint endpoints (http/checkpoint_routes.cc): POST and GET /v1/checkpoints, GET
  // /v1/checkpoints/{id}.
  ApiResponse PostCheckpoint(const ApiRequest& request);
  ApiResponse ListCheckpoints(const ApiRequest& request);
  ApiResponse GetCheckpoint(const std::string& id);
  ApiResponse Readiness();
  // The tool-call ledger's endpoints (http/tool_call_routes.cc): /v1/tool-calls/begin,
  // /v1/tool-calls/{callId}/end|reconcile and GET /v1/tool-calls.
  ApiResponse ToolCallRoute(const ApiRequest& request);
  ApiResponse BeginToolCall(const ApiRequest& request);
  ApiResponse FinishToolCall(const std::string& call_id, const std::string& action,
                             const ApiRequest& request);
  ApiResponse ListToolCalls(const ApiRequest& request);
  // AwaitDurable for a ledger change; without a journal (memory mode: a store that keeps none,
  // or CKPT_DURABILITY=memory) a checkpoint is written before the reply instead, so a ledger
  // record is never held in memory only.
  Status LedgerDurable(const ContextUpdate& update, nlohmann::json* body);
  // Counts a ledger request answered with success in the metrics (when there are any).
  void CountLedger(const std::string& operation, const std::string& result) {
    if (deps_.metrics != nullptr) deps_.metrics->CountLedgerCall(operation, result);
  }

  ApiDeps deps_;
  BearerAuth auth_;  // deps_.bearer_token
};

}  // namespace agentckpt
