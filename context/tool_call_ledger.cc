// ContextState's tool-call ledger methods (context/context_state.h; docs/tool-call-ledger.md).
#include <utility>

#include "checkpoint/checkpoint_json.h"
#include "checkpoint/json_value.h"
#include "checkpoint/limits.h"
#include "common/sha256.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "context/context_state.h"
#include "ledger/ledger_key.h"

namespace agentckpt {

using nlohmann::json;

namespace {

Status Closed() { return UnavailableError("the sidecar is shutting down"); }

Status CheckName(const std::string& s, const char* field, size_t max_chars) {
  if (s.empty()) return InvalidArgumentError(std::string(field) + ": must not be empty");
  if (!IsValidUtf8(s)) return InvalidArgumentError(std::string(field) + ": not valid UTF-8");
  if (Utf8Length(s) > max_chars) {
    return InvalidArgumentError(std::string(field) + ": longer than " + std::to_string(max_chars) +
                                " characters");
  }
  return OkStatus();
}

}  // namespace

std::string ContextState::RedactedCut(std::string text, size_t max_chars) const {
  if (redactor_ != nullptr) redactor_->RedactInPlace(&text);
  return std::string(Utf8TruncateChars(Utf8Sanitize(text), max_chars));
}

StatusOr<ContextUpdate> ContextState::CommitLedger(JournalKind kind, const json& payload,
                                                   int64_t now_ms,
                                                   std::optional<LedgerCall>* completed) {
  if (journal_) {
    std::string text = DumpJsonValue(payload);
    ASSIGN_OR_RETURN(journal_position_, journal_(kind, text));
  }
  // The payload was built here from a state it fits: applying it cannot fail but by a bug.
  Status applied = ledger_.Apply(JournalKindName(kind), payload, completed);
  if (!applied.ok()) return InternalError("ledger: " + applied.message());
  if (completed != nullptr && *completed) {
    auto& log = content_.summary.tool_call_log;
    log.push_back(ToolCallEntryOf(**completed));
    if (log.size() > limits::kToolCallLogEntries) {
      log.erase(log.begin(), log.end() - limits::kToolCallLogEntries);
    }
    // The JSON form follows the content (context_state.h: encoded_ is always Encode(content_)).
    json& encoded_log = encoded_["contextSummary"]["toolCallLog"];
    encoded_log.push_back(ToolCallEntryToJsonValue(log.back()));
    if (encoded_log.size() > limits::kToolCallLogEntries) {
      encoded_log.erase(encoded_log.begin(), encoded_log.end() - limits::kToolCallLogEntries);
    }
    ledger_.Trim(ledger_limits_, now_ms);
  }
  ContextUpdate u;
  u.changed = true;
  u.revision = ++revision_;
  u.journal_sequence = journal_position_.sequence;
  return u;
}

StatusOr<ToolCallBeginResult> ContextState::BeginToolCall(ToolCallBegin request,
                                                          const std::string& call_id,
                                                          int64_t now_ms) {
  RETURN_IF_ERROR(CheckName(request.tool_name, "toolName", limits::kToolNameChars));
  if (!request.args_sha256.empty() && !IsSha256Hex(request.args_sha256)) {
    return InvalidArgumentError("argsSha256: expected 64 lower-case hex characters");
  }
  if (!request.idempotency_key.empty()) {
    RETURN_IF_ERROR(CheckName(request.idempotency_key, "idempotencyKey", limits::kShortTextChars));
  } else if (request.args_sha256.empty()) {
    return InvalidArgumentError(
        "argsSha256: needed to derive a key when no idempotencyKey is given");
  }
  request.input_summary =
      RedactedCut(std::move(request.input_summary), limits::kToolInputSummaryChars);
  std::lock_guard<std::mutex> lock(mu_);
  if (frozen_) return Closed();
  if (request.idempotency_key.empty()) {
    request.idempotency_key =
        DeriveIdempotencyKey(request.tool_name, request.args_sha256,
                             content_.active_task ? content_.active_task->task_id : std::string());
  }
  ledger_.Trim(ledger_limits_, now_ms);
  ToolCallBeginResult r;
  r.update.revision = revision_;
  if (const LedgerCall* found = ledger_.FindKey(request.idempotency_key); found != nullptr) {
    r.kind = found->state == LedgerCallState::kCompleted ? ToolCallBeginResult::Kind::kReplayed
                                                         : ToolCallBeginResult::Kind::kOpen;
    r.call = *found;
    return r;
  }
  if (ledger_.FindCall(call_id) != nullptr) {
    return InternalError("call id " + call_id + " is in use");
  }
  LedgerCall call;
  call.call_id = call_id;
  call.idempotency_key = std::move(request.idempotency_key);
  call.tool_name = std::move(request.tool_name);
  call.effect = request.effect;
  call.args_sha256 = std::move(request.args_sha256);
  call.input_summary = std::move(request.input_summary);
  call.began_at_ms = now_ms;
  ASSIGN_OR_RETURN(r.update, CommitLedger(JournalKind::kToolCallBegin,
                                          LedgerState::BeginPayload(call), now_ms, nullptr));
  r.call = std::move(call);
  return r;
}

namespace {

Status NotOpen(const LedgerState& ledger, const std::string& call_id) {
  const LedgerCall* c = ledger.FindCall(call_id);
  if (c == nullptr) return NotFoundError("no tool call " + call_id);
  if (c->state == LedgerCallState::kCompleted) {
    return AlreadyExistsError("tool call " + call_id + " is already completed");
  }
  return OkStatus();
}

}  // namespace

StatusOr<ContextUpdate> ContextState::EndToolCall(const std::string& call_id, LedgerResult result,
                                                  int64_t now_ms, LedgerCall* ended) {
  result.output_summary =
      RedactedCut(std::move(result.output_summary), limits::kToolOutputSummaryChars);
  if (!result.external_id.empty()) {
    RETURN_IF_ERROR(CheckName(result.external_id, "externalId", limits::kShortTextChars));
  }
  result.reconciled = false;
  std::lock_guard<std::mutex> lock(mu_);
  if (frozen_) return Closed();
  RETURN_IF_ERROR(NotOpen(ledger_, call_id));
  std::optional<LedgerCall> completed;
  ASSIGN_OR_RETURN(ContextUpdate u, CommitLedger(JournalKind::kToolCallEnd,
                                                 LedgerState::EndPayload(call_id, result, now_ms),
                                                 now_ms, &completed));
  if (ended != nullptr && completed) *ended = std::move(*completed);
  return u;
}

StatusOr<ContextUpdate> ContextState::ReconcileToolCall(const std::string& call_id,
                                                        ReconcileOutcome outcome,
                                                        std::string output_summary,
                                                        std::string note, int64_t now_ms) {
  output_summary = RedactedCut(std::move(output_summary), limits::kToolOutputSummaryChars);
  note = RedactedCut(std::move(note), limits::kToolOutputSummaryChars);
  std::lock_guard<std::mutex> lock(mu_);
  if (frozen_) return Closed();
  RETURN_IF_ERROR(NotOpen(ledger_, call_id));
  std::optional<LedgerCall> completed;
  return CommitLedger(JournalKind::kToolCallReconcile,
                      LedgerState::ReconcilePayload(call_id, outcome, output_summary, note, now_ms),
                      now_ms, &completed);
}

std::vector<LedgerCall> ContextState::ToolCalls(LedgerCallState state) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ledger_.List(state);
}

}  // namespace agentckpt
