// Journal entries: one accepted mutation of an agent's context, recorded between checkpoints
// (docs/journal.md, format in docs/checkpoint-format.md "Journal entries").
//
// An entry is sealed by a SHA-256 over its canonical bytes, which include the hash of the entry
// before it, so the entries of an agent form a chain: a damaged, torn or missing entry breaks
// it. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"
#include "common/status.h"

namespace agentckpt {

// What an entry records. The context kinds change the context; kinds added later (the tool-call
// ledger, approval gates) get their own names and values, and a fold that meets a kind it does
// not know stops there rather than guess its effect.
enum class JournalKind {
  kContextPut,  // "context.put": payload = the whole context {activeTask,contextSummary,workspace}
  kContextPatch,  // "context.patch": payload = an RFC 7386 merge patch of the context's JSON form
  kToolCall,      // "tool_call": payload = one toolCallLog entry, appended (newest 50 kept)
  // --- the tool-call ledger (ledger/ledger_state.h; docs/tool-call-ledger.md) ---
  kToolCallBegin,      // "tool_call.begin": payload = the new open call
  kToolCallEnd,        // "tool_call.end": {callId, endedAt, result}; the call enters toolCallLog
  kToolCallReconcile,  // "tool_call.reconcile": {callId, outcome, outputSummary, note, at}
  // --- end of the ledger kinds ---
  // --- approval gates (docs/gates.md): payload = the gate's whole record after the change
  // (gate/gate_record.h), put in place of the record with the same gateId ---
  kGateRequest,  // "gate.request": a new gate, pending
  kGateResolve,  // "gate.resolve": a gate decided (approved, rejected or expired)
  kGateConsume,  // "gate.consume": a decision marked consumed by the agent
  // --- end approval gates ---
};

std::string_view JournalKindName(JournalKind kind);
std::optional<JournalKind> ParseJournalKind(std::string_view name);

// 64 zeros: the "previous hash" of an agent's first entry.
extern const char kJournalGenesisSha256[];

struct JournalEntry {
  std::string agent_id;
  int64_t sequence = 0;  // >= 1; +1 per entry of the agent; never reused
  int64_t epoch = 0;     // the writer lease's epoch (0 without a lease)
  JournalKind kind = JournalKind::kContextPatch;
  std::string payload;  // compact JSON text (redacted before it got here)
  int64_t timestamp_ms = 0;
  std::string prev_sha256;  // sha256 of the entry before (kJournalGenesisSha256 for the first)
  std::string sha256;       // SHA-256 hex of CanonicalBytes(entry)
  bool operator==(const JournalEntry&) const = default;
};

// The bytes the hash covers: a fixed header line, then the fields one per line (none of them can
// hold a newline: ids are validated, the kind is fixed, hashes are hex), then the payload.
std::string JournalCanonicalBytes(const JournalEntry& e);

// Sets e->sha256 from its other fields.
void SealJournalEntry(JournalEntry* e);

// OK when e.sha256 matches its content; kDataLoss saying what does not.
Status VerifyJournalEntry(const JournalEntry& e);

// The stored form: compact JSON {"agentId","epoch","kind","payload","prevSha256","sequence",
// "sha256","timestamp","v":1}.
std::string EncodeJournalEntry(const JournalEntry& e);

// The same stored form built through nlohmann::json: what EncodeJournalEntry falls back to for a
// string that is not well-formed UTF-8 (replaced with U+FFFD), and its reference in tests.
std::string EncodeJournalEntryWithLibrary(const JournalEntry& e);

// Parses the stored form strictly (unknown or missing fields, wrong types, bad hashes' shape).
// Does not verify the hash (VerifyJournalEntry does). kDataLoss naming the problem. Never throws.
StatusOr<JournalEntry> DecodeJournalEntry(std::string_view text);

// The same decode through nlohmann::json (ParseJsonValue): DecodeJournalEntry's reference in the
// fuzzer and in tests, which must accept and return exactly the same entries.
StatusOr<JournalEntry> DecodeJournalEntryWithLibrary(std::string_view text);

// The stored size of an entry, as counted against CKPT_JOURNAL_MAX_BYTES.
inline int64_t JournalEntryBytes(const JournalEntry& e) {
  return static_cast<int64_t>(e.payload.size() + e.agent_id.size() + 200);
}

}  // namespace agentckpt
