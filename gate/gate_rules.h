// The rules of approval gates (docs/gates.md): parsing a request and a resolution, and the
// transitions pending -> approved | rejected (by a decision or at expiry) -> consumed. Each
// transition returns the gate's new record for the journal, or the reason it is refused.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "gate/gate_record.h"

namespace agentckpt {

// POST /v1/gates {gateId?, reason, request?, toolCallId?, argsSha256?, expiresAt? | ttlSeconds?}.
struct GateRequestInput {
  std::string gate_id;  // "" : one is generated
  std::string reason;
  nlohmann::json request;
  std::string tool_call_id;
  std::string args_sha256;
  std::optional<int64_t> expires_at_ms;
  std::optional<int64_t> ttl_s;
};

// {gateId?, decision:"approved"|"rejected", by, response?, argsSha256?}.
struct GateResolution {
  std::string gate_id;
  GateState decision = GateState::kRejected;
  std::string by;
  nlohmann::json response;
  std::string args_sha256;
};

// A transition's result: the gate as it is afterwards, and whether it changed (false: the same
// request or resolution again, answered with the record as it stands).
struct GateOutcome {
  Gate gate;
  bool changed = false;
};

// Parses a request body. kInvalidArgument "field: why" (request over 16 KB, a bad id or hash,
// both expiresAt and ttlSeconds...).
StatusOr<GateRequestInput> ParseGateRequest(const nlohmann::json& body);

// Parses a resolution body; `path_gate_id` (from the URL, "" on NATS) wins over the body's
// gateId, which must then be absent or equal. kInvalidArgument "field: why".
StatusOr<GateResolution> ParseGateResolution(const nlohmann::json& body,
                                             const std::string& path_gate_id);

// A new gate from `in` (id `generated_id` when it names none), expiring at expiresAt, or after
// ttlSeconds, or after `default_ttl_s`. The same gateId with the same reason, tool call and args
// hash answers the existing gate unchanged; kAlreadyExists "gateId: ..." when it differs;
// kResourceExhausted when kGatePendingMax gates are pending; kInvalidArgument "expiresAt: ..."
// for an expiry not after `now_ms`.
StatusOr<GateOutcome> RequestGate(const std::vector<Gate>& gates, const GateRequestInput& in,
                                  int64_t now_ms, int64_t default_ttl_s,
                                  const std::string& generated_id);

// Resolves `g` (not expired: run ExpireIfDue first). A resolution is single-use: on a decided
// gate the same decision answers the record unchanged, and a different one (or a different
// argsSha256) is kAlreadyExists "conflict: ...". On a pending gate, an argsSha256 that differs
// from the gate's (or an approval without it when the gate has one) is kFailedPrecondition
// "argsSha256: ...", and the gate stays pending.
StatusOr<GateOutcome> ResolveGate(const Gate& g, const GateResolution& r, int64_t now_ms);

// The rejected ("expired") record of a pending gate whose expiresAt is at or before `now_ms`;
// nullopt otherwise.
std::optional<Gate> ExpireIfDue(const Gate& g, int64_t now_ms);

// Marks a decided gate consumed (again: unchanged). kFailedPrecondition "pending: ..." while it
// waits for its decision.
StatusOr<GateOutcome> ConsumeGate(const Gate& g, int64_t now_ms);

}  // namespace agentckpt
