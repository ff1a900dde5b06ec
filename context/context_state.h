// ContextState: the agent's current context as last told through the HTTP API (active task,
// context summary, optional workspace), with a revision counter.
//
// Every change is a whole request applied under one lock: the new context is built and validated
// on a copy and swapped in only when valid, so a rejected request leaves the context exactly as
// it was, and a snapshot (taken under the same lock) is always a consistent cut between requests.
// All methods are thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "common/status.h"
#include "gate/gate_rules.h"
#include "journal/journal_entry.h"
#include "ledger/ledger_state.h"
#include "redact/redactor.h"

namespace agentckpt {

struct ContextSnapshot {
  std::optional<ActiveTask> active_task;
  ContextSummary summary;
  std::optional<Workspace> workspace;
  uint64_t revision = 0;    // 0 until the first change; +1 for each change of content
  JournalPosition journal;  // the last journal entry this context includes
  Ledger ledger;            // the tool-call ledger (trimmed to its limits)
  std::vector<Gate> gates;  // the approval gates (docs/gates.md)
};

struct ContextUpdate {
  uint64_t revision = 0;
  bool changed = false;           // the content differs from before the request
  bool phase_changed = false;     // a task is active and its (taskId, phase) differs from before
  int64_t journal_sequence = 0;   // the journal position after the request (0: no journal)
  size_t tool_call_log_size = 0;  // entries in the tool-call log after the request
};

// POST /v1/tool-calls/begin, decoded (docs/tool-call-ledger.md).
struct ToolCallBegin {
  std::string tool_name;
  ToolEffect effect = ToolEffect::kWrite;
  std::string idempotency_key;  // "" derives one (ledger/ledger_key.h)
  std::string args_sha256;      // "" or 64 lower-case hex
  std::string input_summary;
};

// What a begin found: a new call (started), a completed key (replayed: nothing was recorded)
// or an open one (the call's outcome is unknown until it is ended or reconciled).
struct ToolCallBeginResult {
  enum class Kind { kStarted, kReplayed, kOpen } kind = Kind::kStarted;
  LedgerCall call;
  ContextUpdate update;  // journal_sequence is 0 unless kStarted
};

// The result of a gate operation: the gate afterwards, whether it changed, and the journal
// position to await before the reply (0: no journal).
struct GateUpdate {
  Gate gate;
  bool changed = false;
  int64_t journal_sequence = 0;
};

// Records a request's effect in the journal (sidecar/journal_writer.h): called under the
// context's lock, in the order requests are applied, with the kind and the compact JSON of the
// effect ("" when the request changed nothing); returns the journal's head. An error refuses the
// request (the context is left as it was).
using JournalHook =
    std::function<StatusOr<JournalPosition>(JournalKind kind, const std::string& payload)>;

class ContextState {
 public:
  ContextState() = default;
  ContextState(const ContextState&) = delete;
  ContextState& operator=(const ContextState&) = delete;

  // Secrets in the text the API accepts (task title, gathering results, plan, draft, tool-call
  // summaries) are replaced by markers (redact/redactor.h) before the context changes, so they
  // are never stored, published or put in a prompt. `redactor` is borrowed and must outlive
  // this object; null (the default) redacts nothing. Call before the first request.
  void set_redactor(const Redactor* redactor) { redactor_ = redactor; }

  // Every later change is recorded through `hook` before it is applied. Call before the first
  // request.
  void set_journal(JournalHook hook) { journal_ = std::move(hook); }

  // PUT /v1/context: replaces the whole context with `body`, an object with "contextSummary"
  // (required), "activeTask" (object or null/absent) and "workspace" (object or null/absent).
  // Summaries are cut per the schema (checkpoint/limits.h). kInvalidArgument whose message starts
  // with the offending field's path; kUnavailable after Freeze().
  StatusOr<ContextUpdate> Replace(const nlohmann::json& body);

  // PATCH /v1/context: applies an RFC 7386 merge patch to the context's JSON form, then validates
  // the result as Replace does. kInvalidArgument as Replace.
  StatusOr<ContextUpdate> MergePatch(const nlohmann::json& patch);

  // POST /v1/tool-calls: appends one ToolCallEntry (summaries cut to 200/500 characters); the
  // newest 50 are kept. kInvalidArgument naming the field.
  StatusOr<ContextUpdate> AppendToolCall(const nlohmann::json& entry);

  // --- the tool-call ledger (context/tool_call_ledger.cc; docs/tool-call-ledger.md) ---
  // Completed keys kept (CKPT_LEDGER_KEEP, CKPT_LEDGER_KEEP_AGE). Call before the first request.
  void set_ledger_limits(LedgerLimits limits) { ledger_limits_ = limits; }

  // POST /v1/tool-calls/begin at `now_ms`; `call_id` names the call if one is started. A key
  // that has a result replays it and records nothing; an open key is reported (kOpen) and
  // records nothing. kInvalidArgument naming the field (argsSha256 or idempotencyKey is needed
  // to derive a key); errors of the journal as Replace.
  StatusOr<ToolCallBeginResult> BeginToolCall(ToolCallBegin request, const std::string& call_id,
                                              int64_t now_ms);
  // POST /v1/tool-calls/{callId}/end: completes an open call with `result` (summaries redacted
  // and cut) and appends it to toolCallLog. kNotFound for an unknown call, kAlreadyExists for a
  // completed one.
  StatusOr<ContextUpdate> EndToolCall(const std::string& call_id, LedgerResult result,
                                      int64_t now_ms, LedgerCall* ended);
  // POST /v1/tool-calls/{callId}/reconcile: succeeded/failed complete the call (as an end with
  // reconciled=true); not_executed removes it, which frees its key. Errors as EndToolCall.
  StatusOr<ContextUpdate> ReconcileToolCall(const std::string& call_id, ReconcileOutcome outcome,
                                            std::string output_summary, std::string note,
                                            int64_t now_ms);
  // GET /v1/tool-calls?state=...: the calls in `state`.
  std::vector<LedgerCall> ToolCalls(LedgerCallState state) const;

  // Sets the context from a restored checkpoint (with the journal folded in: its journal
  // position comes along) without counting it as a change (the revision stays, so no periodic
  // checkpoint repeats what the store already holds). Calls the checkpoint's ledger holds open
  // become outcome_unknown: whoever began them is gone.
  void Seed(const Checkpoint& cp);

  // Stops intake for shutdown: every later Replace/MergePatch/AppendToolCall fails with
  // kUnavailable, so a final checkpoint taken after Freeze holds every accepted change.
  void Freeze();

  // --- approval gates (context_gates.cc; rules in gate/gate_rules.h) ---
  // Each change is journaled (gate.request / gate.resolve / gate.consume, the gate's whole
  // record) before it is applied, counts as a change of the context (revision + 1) and wakes
  // WaitGate. Errors: the rules' (kInvalidArgument, kAlreadyExists, kFailedPrecondition,
  // kResourceExhausted), kNotFound for an unknown gateId, the journal's (standby, lease lost),
  // kUnavailable after Freeze().

  // Secrets in a gate's reason, request and response are redacted (as the context's text)
  // before anything is recorded.
  // POST /v1/gates. `generated_id` is used when the request names no gateId.
  StatusOr<GateUpdate> RequestGate(const GateRequestInput& in, int64_t now_ms,
                                   int64_t default_ttl_s, const std::string& generated_id);
  // Resolves a gate; one whose expiresAt has passed is expired first (so the resolution meets
  // the expired decision: a conflict unless it rejects).
  StatusOr<GateUpdate> ResolveGate(const GateResolution& r, int64_t now_ms);
  // POST /v1/gates/{id}/consume (expires the gate first when due).
  StatusOr<GateUpdate> ConsumeGate(const std::string& gate_id, int64_t now_ms);
  // Expires every pending gate whose expiresAt is at or before `now_ms`: the expired records
  // (each journaled) and the journal position to await.
  StatusOr<std::vector<GateUpdate>> ExpireDueGates(int64_t now_ms);
  // The gate `gate_id`; kNotFound when there is none.
  StatusOr<Gate> GetGate(const std::string& gate_id) const;
  // Blocks until gate `gate_id` is no longer pending, `deadline` passes or its expiresAt (as
  // `expiry_deadline` maps it) is reached; returns the gate as it then is. kNotFound.
  StatusOr<Gate> WaitGate(const std::string& gate_id,
                          std::chrono::steady_clock::time_point deadline) const;
  // Every gate, oldest first.
  std::vector<Gate> Gates() const;
  // --- end approval gates ---

  // A copy of the current context.
  ContextSnapshot Snapshot() const;

  // The context in its JSON form {"activeTask","contextSummary","workspace"}.
  nlohmann::json ToJson() const;

 private:
  struct Content {
    std::optional<ActiveTask> active_task;
    ContextSummary summary;
    std::optional<Workspace> workspace;
    bool operator==(const Content&) const = default;
  };
  // Requires mu_: records a ledger change of `kind` and applies it.
  StatusOr<ContextUpdate> CommitLedger(JournalKind kind, const nlohmann::json& payload,
                                       int64_t now_ms, std::optional<LedgerCall>* completed);
  std::string RedactedCut(std::string text, size_t max_chars) const;
  StatusOr<Content> Decode(const nlohmann::json& body) const;
  // The parts of Decode. `previous` (may be null) is what the field held before the request:
  // text equal to it was redacted when it arrived and is not scanned again.
  StatusOr<ContextSummary> DecodeSummary(const nlohmann::json& j,
                                         const ContextSummary* previous) const;
  StatusOr<std::optional<ActiveTask>> DecodeTask(const nlohmann::json& j) const;
  static StatusOr<std::optional<Workspace>> DecodeWorkspace(const nlohmann::json& j);
  void RedactToolCall(ToolCallEntry* entry) const;
  void RedactChanged(std::string* text, const std::string* previous) const;
  // RedactChanged on the summary's free text (gathering results, plan outline, draft).
  void RedactSummaryText(ContextSummary* s, const ContextSummary* previous) const;
  static nlohmann::json Encode(const Content& c);
  // Requires mu_. MergePatch for an object patch, decoding only the parts the patch names (and
  // keeping the tool-call log when the patch leaves it alone). Same result as decoding the whole
  // patched document; std::nullopt when the patch needs the general path.
  std::optional<StatusOr<ContextUpdate>> MergePatchParts(const nlohmann::json& patch);
  // Requires mu_. The merge of MergePatchParts once the patch is known to fit it. `keep_log`:
  // the patch leaves the tool-call log alone and the caller has moved it out of content_ (the
  // summaries merged, checked and compared here then have none, and the update's
  // tool_call_log_size is the caller's to set).
  StatusOr<ContextUpdate> MergeNamedParts(const nlohmann::json& patch, bool keep_log);
  // Requires mu_. `payload` gives the journal payload of the change from the next content
  // (called only if it changes); `update_encoded` turns encoded_ into the JSON form of the next
  // content (called only if it changes, after `payload`).
  StatusOr<ContextUpdate> Commit(
      Content next, JournalKind kind, const std::function<nlohmann::json(const Content&)>& payload,
      const std::function<void(const Content&, nlohmann::json*)>& update_encoded);

  const Redactor* redactor_ = nullptr;
  mutable std::mutex mu_;
  Content content_;
  nlohmann::json encoded_ = Encode(Content{});  // always Encode(content_), kept up to date
  uint64_t revision_ = 0;
  bool frozen_ = false;
  JournalHook journal_;
  JournalPosition journal_position_;
  LedgerState ledger_;  // changed only through the journal's ledger kinds
  LedgerLimits ledger_limits_;
  // Requires mu_: journals `g` under `kind`, then puts it in gates_ and wakes the waiters.
  StatusOr<GateUpdate> CommitGate(JournalKind kind, Gate g);
  // Requires mu_: the gate named `gate_id`, or null.
  const Gate* FindGateLocked(const std::string& gate_id) const;
  std::vector<Gate> gates_;
  mutable std::condition_variable gate_cv_;
};

}  // namespace agentckpt
