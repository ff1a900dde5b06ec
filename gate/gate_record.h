// Approval gates (docs/gates.md): the gate record and its stored JSON form, kept in the journal
// (gate.* entries) and in checkpoints (the "gates" array). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace agentckpt {

enum class GateState { kPending, kApproved, kRejected };
std::string_view GateStateName(GateState s);  // "pending", "approved", "rejected"
std::optional<GateState> ParseGateState(std::string_view name);

// The first (and only) decision on a gate.
struct GateDecision {
  GateState decision = GateState::kRejected;  // kApproved or kRejected
  std::string by;                             // who decided ("expired" decisions: "agentckpt")
  nlohmann::json response;                    // null when none
  std::string args_sha256;                    // the hash the decider approved ("" when none given)
  int64_t resolved_at_ms = 0;
  bool expired = false;  // rejected because expiresAt passed
  bool operator==(const GateDecision&) const = default;
};

struct Gate {
  std::string gate_id;
  GateState state = GateState::kPending;
  std::string reason;
  nlohmann::json request;    // null when none; at most kGateRequestMaxBytes as compact JSON
  std::string tool_call_id;  // "" when none
  std::string args_sha256;   // 64 lower-case hex, or "" when none
  int64_t created_at_ms = 0;
  int64_t expires_at_ms = 0;
  std::optional<GateDecision> decision;
  bool consumed = false;
  int64_t consumed_at_ms = 0;
  bool operator==(const Gate&) const = default;
};

inline constexpr size_t kGateRequestMaxBytes = 16 * 1024;
inline constexpr size_t kGateIdMaxChars = 128;
inline constexpr size_t kGateReasonMaxChars = 2000;
// Pending gates an agent may hold at once; and consumed gates kept (oldest dropped first).
inline constexpr size_t kGatePendingMax = 1000;
inline constexpr size_t kGateConsumedKept = 200;

// The stored and API form: {"gateId","state","reason","request","toolCallId","argsSha256",
// "createdAt","expiresAt","decision":null|{"decision","by","response","argsSha256",
// "resolvedAt","expired"},"consumed","consumedAt"}. Absent optional strings are null.
nlohmann::json GateToJson(const Gate& g);

// Parses the stored form strictly; kDataLoss naming the field (a stored record that does not
// parse is damaged).
StatusOr<Gate> GateFromJson(const nlohmann::json& j);

// Parses a stored array of gates; kDataLoss as GateFromJson.
StatusOr<std::vector<Gate>> GatesFromJson(const nlohmann::json& j);
nlohmann::json GatesToJson(const std::vector<Gate>& gates);

// Puts `g` into `gates` (replacing the gate of the same id, else appending) and then drops the
// oldest consumed gates beyond kGateConsumedKept. The journal fold and the live state both use
// it, so both keep the same gates.
void UpsertGate(std::vector<Gate>* gates, Gate g);

// A gate id: 1-128 characters of [A-Za-z0-9_.:-].
bool IsValidGateId(std::string_view id);

// One line for the restoration prompt: "gate G pending: <reason> (tool T, args sha S...)" or
// "gate G approved by X at T with response R: proceed with T args sha S".
std::string DescribeGateForPrompt(const Gate& g);

}  // namespace agentckpt
