// Deciding an approval gate the way `agentckpt gate approve|reject` does (docs/gates.md "No
// decision lost"), shared by that subcommand and the web console (console/): the resolution goes
// to the running sidecar as a NATS request on agent.{id}.gate.resolve; when no sidecar answers
// (NATS down, no responder, no reply in time), it is written to the store under the agent's
// writer lease (cli/gate_store.h), which the sidecar folds in at its next start.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/nats_client.h"
#include "common/status.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

struct GateDecisionResult {
  // The sidecar's reply (the gate, or {"error":{code,message},"gate"?} for a refusal such as a
  // conflict or an args mismatch), or the gate decided in the store.
  nlohmann::json result;
  std::string via;  // "nats" or "store"
};

// Decides a gate of `agent_id` with `body` ({gateId, decision, by, response?, argsSha256?}, the
// agent.{id}.gate.resolve request). `open_store` is called only when no sidecar answered.
// kInvalidArgument for a body the rules refuse (before anything is sent); on the store path,
// kUnavailable "no sidecar answered ... holds the writer lease" while a live sidecar holds the
// lease, else the errors of ResolveGateInStore (kNotFound, kAlreadyExists "conflict: ...",
// kFailedPrecondition "argsSha256: ...", kDataLoss) and of `open_store`. Thread-safe.
StatusOr<GateDecisionResult> DecideGate(
    const NatsClientOptions& nats, const std::string& agent_id, const nlohmann::json& body,
    const std::function<StatusOr<CheckpointStore*>()>& open_store);

}  // namespace agentckpt
