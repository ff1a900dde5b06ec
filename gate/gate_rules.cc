#include "gate/gate_rules.h"

#include <algorithm>

#include "common/time_format.h"

namespace agentckpt {

using nlohmann::json;

namespace {

bool IsSha256Hex(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Reads an optional string member; kInvalidArgument when present and not a string (null is
// absent).
Status OptString(const json& body, const char* key, std::string* out, size_t max_chars) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return OkStatus();
  if (!it->is_string()) return InvalidArgumentError(std::string(key) + ": expected a string");
  *out = it->get<std::string>();
  if (out->size() > max_chars) {
    return InvalidArgumentError(std::string(key) + ": longer than " + std::to_string(max_chars) +
                                " bytes");
  }
  return OkStatus();
}

Status CheckKeys(const json& body, std::initializer_list<const char*> keys) {
  if (!body.is_object()) return InvalidArgumentError("document: expected an object");
  for (const auto& item : body.items()) {
    // A named copy: clang 14 cannot capture a structured binding in a lambda.
    const std::string& key = item.key();
    if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; })) {
      return InvalidArgumentError(key + ": unknown field");
    }
  }
  return OkStatus();
}

Status CheckHash(const std::string& h) {
  if (h.empty() || IsSha256Hex(h)) return OkStatus();
  return InvalidArgumentError("argsSha256: expected 64 lower-case hex characters");
}

}  // namespace

StatusOr<GateRequestInput> ParseGateRequest(const json& body) {
  if (Status s = CheckKeys(body, {"gateId", "reason", "request", "toolCallId", "argsSha256",
                                  "expiresAt", "ttlSeconds"});
      !s.ok()) {
    return s;
  }
  GateRequestInput in;
  if (Status s = OptString(body, "gateId", &in.gate_id, kGateIdMaxChars); !s.ok()) return s;
  if (body.contains("gateId") && !IsValidGateId(in.gate_id)) {
    return InvalidArgumentError("gateId: expected 1-128 characters of [A-Za-z0-9_.:-]");
  }
  if (Status s = OptString(body, "reason", &in.reason, kGateReasonMaxChars); !s.ok()) return s;
  if (in.reason.empty()) return InvalidArgumentError("reason: required, a non-empty string");
  if (Status s = OptString(body, "toolCallId", &in.tool_call_id, 256); !s.ok()) return s;
  if (Status s = OptString(body, "argsSha256", &in.args_sha256, 64); !s.ok()) return s;
  if (Status s = CheckHash(in.args_sha256); !s.ok()) return s;
  if (auto it = body.find("request"); it != body.end()) {
    in.request = *it;
    if (in.request.dump(-1, ' ', false, json::error_handler_t::replace).size() >
        kGateRequestMaxBytes) {
      return InvalidArgumentError("request: larger than 16384 bytes as compact JSON");
    }
  }
  const bool has_at = body.contains("expiresAt") && !body["expiresAt"].is_null();
  const bool has_ttl = body.contains("ttlSeconds") && !body["ttlSeconds"].is_null();
  if (has_at && has_ttl) return InvalidArgumentError("ttlSeconds: give expiresAt or ttlSeconds");
  if (has_at) {
    std::string text;
    if (Status s = OptString(body, "expiresAt", &text, 64); !s.ok()) return s;
    auto t = ParseRfc3339Millis(text);
    if (!t.ok()) return InvalidArgumentError("expiresAt: " + t.status().message());
    in.expires_at_ms = *t;
  }
  if (has_ttl) {
    const json& v = body["ttlSeconds"];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 31536000) {
      return InvalidArgumentError("ttlSeconds: expected an integer from 1 to 31536000");
    }
    in.ttl_s = v.get<int64_t>();
  }
  return in;
}

StatusOr<GateResolution> ParseGateResolution(const json& body, const std::string& path_gate_id) {
  if (Status s = CheckKeys(body, {"gateId", "decision", "by", "response", "argsSha256"}); !s.ok()) {
    return s;
  }
  GateResolution r;
  if (Status s = OptString(body, "gateId", &r.gate_id, kGateIdMaxChars); !s.ok()) return s;
  if (!path_gate_id.empty()) {
    if (!r.gate_id.empty() && r.gate_id != path_gate_id) {
      return InvalidArgumentError("gateId: differs from the gate in the path");
    }
    r.gate_id = path_gate_id;
  }
  if (!IsValidGateId(r.gate_id)) {
    return InvalidArgumentError("gateId: expected 1-128 characters of [A-Za-z0-9_.:-]");
  }
  std::string decision;
  if (Status s = OptString(body, "decision", &decision, 16); !s.ok()) return s;
  if (decision == "approved") {
    r.decision = GateState::kApproved;
  } else if (decision == "rejected") {
    r.decision = GateState::kRejected;
  } else {
    return InvalidArgumentError("decision: expected \"approved\" or \"rejected\"");
  }
  if (Status s = OptString(body, "by", &r.by, 256); !s.ok()) return s;
  if (r.by.empty()) return InvalidArgumentError("by: required, a non-empty string");
  if (Status s = OptString(body, "argsSha256", &r.args_sha256, 64); !s.ok()) return s;
  if (Status s = CheckHash(r.args_sha256); !s.ok()) return s;
  if (auto it = body.find("response"); it != body.end()) {
    r.response = *it;
    if (r.response.dump(-1, ' ', false, json::error_handler_t::replace).size() >
        kGateRequestMaxBytes) {
      return InvalidArgumentError("response: larger than 16384 bytes as compact JSON");
    }
  }
  return r;
}

StatusOr<GateOutcome> RequestGate(const std::vector<Gate>& gates, const GateRequestInput& in,
                                  int64_t now_ms, int64_t default_ttl_s,
                                  const std::string& generated_id) {
  const std::string id = in.gate_id.empty() ? generated_id : in.gate_id;
  for (const Gate& g : gates) {
    if (g.gate_id != id) continue;
    if (g.reason == in.reason && g.tool_call_id == in.tool_call_id &&
        g.args_sha256 == in.args_sha256 && g.request == in.request) {
      return GateOutcome{g, false};
    }
    return AlreadyExistsError("gateId: " + id + " already names a different gate");
  }
  size_t pending = std::count_if(gates.begin(), gates.end(),
                                 [](const Gate& g) { return g.state == GateState::kPending; });
  if (pending >= kGatePendingMax) {
    return ResourceExhaustedError("gates: " + std::to_string(kGatePendingMax) +
                                  " gates are pending already");
  }
  Gate g;
  g.gate_id = id;
  g.reason = in.reason;
  g.request = in.request;
  g.tool_call_id = in.tool_call_id;
  g.args_sha256 = in.args_sha256;
  g.created_at_ms = now_ms;
  g.expires_at_ms =
      in.expires_at_ms ? *in.expires_at_ms : now_ms + 1000 * (in.ttl_s ? *in.ttl_s : default_ttl_s);
  if (g.expires_at_ms <= now_ms) return InvalidArgumentError("expiresAt: not in the future");
  return GateOutcome{std::move(g), true};
}

StatusOr<GateOutcome> ResolveGate(const Gate& g, const GateResolution& r, int64_t now_ms) {
  if (g.decision) {
    const GateDecision& d = *g.decision;
    const bool same = d.decision == r.decision && !d.expired &&
                      (r.args_sha256.empty() || r.args_sha256 == d.args_sha256);
    if (same) return GateOutcome{g, false};
    return AlreadyExistsError("conflict: gate " + g.gate_id + " was already " +
                              std::string(GateStateName(d.decision)) +
                              (d.expired ? " (expired)" : " by " + d.by));
  }
  const bool mismatch = !r.args_sha256.empty() && r.args_sha256 != g.args_sha256;
  const bool unproven =
      r.decision == GateState::kApproved && !g.args_sha256.empty() && r.args_sha256.empty();
  if (mismatch || unproven) {
    return FailedPreconditionError(
        "argsSha256: " +
        std::string(mismatch ? "differs from the gate's request" : "required to approve") +
        " (the gate's is " + (g.args_sha256.empty() ? std::string("none") : g.args_sha256) +
        "); the gate stays pending");
  }
  Gate out = g;
  out.state = r.decision;
  out.decision = GateDecision{r.decision, r.by, r.response, r.args_sha256, now_ms, false};
  return GateOutcome{std::move(out), true};
}

std::optional<Gate> ExpireIfDue(const Gate& g, int64_t now_ms) {
  if (g.decision || now_ms < g.expires_at_ms) return std::nullopt;
  Gate out = g;
  out.state = GateState::kRejected;
  out.decision = GateDecision{GateState::kRejected, "agentckpt", nullptr, "", now_ms, true};
  return out;
}

StatusOr<GateOutcome> ConsumeGate(const Gate& g, int64_t now_ms) {
  if (!g.decision) {
    return FailedPreconditionError("pending: gate " + g.gate_id + " has no decision yet");
  }
  if (g.consumed) return GateOutcome{g, false};
  Gate out = g;
  out.consumed = true;
  out.consumed_at_ms = now_ms;
  return GateOutcome{std::move(out), true};
}

}  // namespace agentckpt
