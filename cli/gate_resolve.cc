#include "cli/gate_resolve.h"

#include <optional>

#include "cli/gate_store.h"
#include "common/env.h"
#include "common/status_macros.h"
#include "gate/gate_rules.h"
#include "nats/subjects.h"

namespace agentckpt {
namespace {

using nlohmann::json;

// Sends the resolution to the running sidecar. nullopt when no sidecar answered (NATS down, no
// responder or no reply in time); else its reply.
std::optional<json> ResolveOverNats(const NatsClientOptions& options, const std::string& agent,
                                    const json& body) {
  auto nc = ConnectNats(options, "agentckpt gate");
  if (!nc.ok()) return std::nullopt;
  natsMsg* msg = nullptr;
  std::string data = body.dump();
  natsStatus s =
      natsConnection_Request(&msg, nc->get(), subjects::GateResolve(agent).c_str(), data.data(),
                             static_cast<int>(data.size()), options.timeout_ms);
  if (s != NATS_OK) return std::nullopt;
  json reply = json::parse(natsMsg_GetData(msg), natsMsg_GetData(msg) + natsMsg_GetDataLength(msg),
                           nullptr, /*allow_exceptions=*/false);
  natsMsg_Destroy(msg);
  return reply;
}

}  // namespace

StatusOr<GateDecisionResult> DecideGate(
    const NatsClientOptions& nats, const std::string& agent_id, const json& body,
    const std::function<StatusOr<CheckpointStore*>()>& open_store) {
  auto parsed = ParseGateResolution(body, "");
  if (!parsed.ok()) return parsed.status();
  RETURN_IF_ERROR(CheckNatsClientOptions(nats));
  if (auto reply = ResolveOverNats(nats, agent_id, body)) return GateDecisionResult{*reply, "nats"};
  // No sidecar answered: the decision goes to the store, fenced by the writer lease.
  auto store = open_store();
  if (!store.ok()) return store.status();
  auto gate = ResolveGateInStore(*store, Env::Default(), agent_id, *parsed);
  if (!gate.ok()) {
    const Status& st = gate.status();
    if (st.code() == StatusCode::kFailedPrecondition && st.message().rfind("lease held", 0) == 0) {
      return UnavailableError("no sidecar answered on " + subjects::GateResolve(agent_id) +
                              ", and one holds the writer lease: " + st.message());
    }
    return st;
  }
  return GateDecisionResult{GateToJson(*gate), "store"};
}

}  // namespace agentckpt
