// GateApi: the approval-gate operations with their replies (docs/gates.md), shared by the HTTP
// routes (/v1/gates...) and the NATS request agent.{id}.gate.resolve, so all ways of resolving a
// gate answer alike. Each change is durable (journal, sync mode) before its reply; then the
// `on_change` hook runs (events, the checkpoint at a new gate, the agent's status).
// Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/env.h"
#include "context/context_state.h"
#include "context/journal_writer.h"

namespace agentckpt {

// A reply: HTTP status and JSON body. Errors are {"error":{"code","message","field"}}, and a
// 409 CONFLICT carries the gate with its first decision as "gate".
struct GateReply {
  int status = 200;
  nlohmann::json body;
};

struct GateApiDeps {
  Env* env = nullptr;
  ContextState* context = nullptr;
  JournalWriter* journal = nullptr;  // null: replies do not wait for durability
  int64_t default_ttl_s = 86400;     // CKPT_GATE_TTL_S
  int64_t max_wait_s = 300;          // the longest waitSeconds accepted
  // OK when this process may change gates; else the error every change answers first (the
  // sidecar: kUnavailable "standby: ..." without the writer lease, whose gates it does not
  // know yet). Empty: always OK.
  std::function<Status()> may_write;
  // After a durable change: "requested", "resolved" or "consumed" and the gate's record. Runs
  // on the replying thread before the reply.
  std::function<void(const std::string& event, const Gate& gate)> on_change;
};

class GateApi {
 public:
  explicit GateApi(GateApiDeps deps);

  // Request, Resolve and Consume each run in a span, agentckpt.gate.request|resolve|consume
  // (docs/tracing.md).
  // POST /v1/gates: 201 {gateId, state, expiresAt, gate}; the same request again 200 (unchanged).
  GateReply Request(const std::string& body);
  // POST /v1/gates/{id}/resolve (path_gate_id set) or the NATS request (path_gate_id ""):
  // 200 with the gate; 404; 409 CONFLICT with the first decision; 409 ARGS_MISMATCH.
  GateReply Resolve(const std::string& body, const std::string& path_gate_id);
  // POST /v1/gates/{id}/consume: 200 with the gate; 404; 409 NOT_DECIDED while pending.
  GateReply Consume(const std::string& gate_id);
  // GET /v1/gates/{id}?waitSeconds=N: the gate, waiting up to N seconds (and no later than its
  // expiry, when it is expired durably) while it is pending. 400 for a bad waitSeconds; 404.
  GateReply Get(const std::string& gate_id, const std::map<std::string, std::string>& query);
  // GET /v1/gates?state=pending|approved|rejected: {"gates":[...]}.
  GateReply List(const std::map<std::string, std::string>& query);
  // Expires every due pending gate durably (the periodic sweep); the number expired.
  int ExpireDue();

  // The error reply of a non-OK status (STANDBY and LEASE_LOST as the other mutations).
  static GateReply ErrorReply(const Status& status);

 private:
  // Request, Resolve and Consume without their spans.
  GateReply DoRequest(const std::string& body);
  GateReply DoResolve(const std::string& body, const std::string& path_gate_id);
  GateReply DoConsume(const std::string& gate_id);
  // Waits until everything recorded so far is durable (sync mode), so a read never shows a
  // change a crash could still take back. The journal's errors.
  Status AwaitRecorded();
  // The error reply when may_write refuses; nullopt when changes may proceed.
  std::optional<GateReply> Refused() const;
  // Awaits durability of `u` and runs on_change; an error reply when not durable.
  std::optional<GateReply> Finish(const StatusOr<GateUpdate>& u, const std::string& event);

  GateApiDeps deps_;
};

// Routes a request under /v1/gates: nullopt when `path` is not a gate path; a 405 reply (with
// `*allow` set to the methods the path accepts) for a wrong method.
std::optional<GateReply> RouteGateRequest(GateApi* api, const std::string& method,
                                          const std::string& path,
                                          const std::map<std::string, std::string>& query,
                                          const std::string& body, std::string* allow);

}  // namespace agentckpt
