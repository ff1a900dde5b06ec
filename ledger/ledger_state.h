// LedgerState: the tool-call ledger of one agent (docs/tool-call-ledger.md): the calls begun and
// not yet ended (open) and a bounded index of completed idempotency keys with their results.
//
// Every change is a journal payload applied by Apply, both live (ContextState, after the entry
// is recorded) and at restore (the journal fold), so both arrive at the same state. A plain value
// type: not thread-safe (ContextState guards it with its lock).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "common/status.h"

namespace agentckpt {

// The journal kinds' names of the ledger's changes (journal/journal_entry.h).
inline constexpr std::string_view kLedgerBeginKind = "tool_call.begin";
inline constexpr std::string_view kLedgerEndKind = "tool_call.end";
inline constexpr std::string_view kLedgerReconcileKind = "tool_call.reconcile";

// How many completed keys are kept (CKPT_LEDGER_KEEP) and for how long (CKPT_LEDGER_KEEP_AGE).
struct LedgerLimits {
  int64_t keep_keys = 1000;
  int64_t keep_ms = int64_t{24} * 3600 * 1000;
};

enum class ReconcileOutcome { kSucceeded, kFailed, kNotExecuted };
std::string_view ReconcileOutcomeName(ReconcileOutcome o);  // "succeeded", "failed", ...
std::optional<ReconcileOutcome> ParseReconcileOutcome(std::string_view name);

class LedgerState {
 public:
  LedgerState() = default;
  explicit LedgerState(Ledger ledger) : ledger_(std::move(ledger)) {}

  // The call holding `key` (open first, then completed); null when the key is free.
  const LedgerCall* FindKey(std::string_view key) const;
  // The call with `call_id`, open or completed; null when unknown.
  const LedgerCall* FindCall(std::string_view call_id) const;

  // Journal payloads of the three changes. `call` is a new call (state started).
  static nlohmann::json BeginPayload(const LedgerCall& call);
  static nlohmann::json EndPayload(const std::string& call_id, const LedgerResult& result,
                                   int64_t ended_at_ms);
  static nlohmann::json ReconcilePayload(const std::string& call_id, ReconcileOutcome outcome,
                                         const std::string& output_summary, const std::string& note,
                                         int64_t at_ms);

  // Applies one payload of `kind` (a name above). The call an end or a succeeded/failed
  // reconcile completed is copied to *completed (when not null); nullopt otherwise.
  // kInvalidArgument when the payload does not decode, kNotFound when the call is not open,
  // kAlreadyExists when a begin's key or call id is taken. The state is unchanged on error.
  Status Apply(std::string_view kind, const nlohmann::json& payload,
               std::optional<LedgerCall>* completed = nullptr);

  // Marks every open call outcome_unknown (after a restart); returns how many there are.
  int MarkOpenOutcomeUnknown();

  // Drops the oldest completed keys beyond `limits` (count, then age against now_ms).
  void Trim(const LedgerLimits& limits, int64_t now_ms);

  // Calls in `state` (open ones oldest first; completed ones newest first).
  std::vector<LedgerCall> List(LedgerCallState state) const;

  const Ledger& ledger() const { return ledger_; }
  bool operator==(const LedgerState&) const = default;

 private:
  Ledger ledger_;
};

// The toolCallLog entry of a completed call (what POST /v1/tool-calls would have recorded).
ToolCallEntry ToolCallEntryOf(const LedgerCall& call);

}  // namespace agentckpt
