// The checkpoint document, schema versions 1 and 2 (see docs/checkpoint-format.md).
//
// Plain value types; no behaviour beyond enum <-> string. Timestamps are milliseconds since the
// Unix epoch (UTC) and are written as RFC 3339 strings with millisecond precision.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentckpt {

// --- schema version 2: the tool-call ledger (docs/tool-call-ledger.md) ---
// A plaintext document carrying a `ledger` is version 2; one without it may still be version 1
// (written before the ledger existed), and version 1 documents never carry one.
inline constexpr int kSchemaVersion = 2;
inline constexpr int kLedgerlessSchemaVersion = 1;
// --- end of the ledger's schema block ---
// Encrypted documents (contextSummary stored as encryptedContextSummary; docs/encryption.md) are
// version 2 as well; what tells them apart is the encryptedContextSummary member.
inline constexpr int kEncryptedSchemaVersion = 2;
inline constexpr int kMaxReadableSchemaVersion = 2;

enum class TaskPhase { kGathering, kPlanning, kExecuting, kReviewing };
enum class TriggerReason { kPeriodic, kPreCompaction, kTaskPhaseChange, kManual, kPreShutdown };

std::string_view TaskPhaseName(TaskPhase phase);                   // "gathering", ...
std::optional<TaskPhase> ParseTaskPhase(std::string_view name);     // nullopt if unknown
std::string_view TriggerReasonName(TriggerReason reason);          // "pre_compaction", ...
std::optional<TriggerReason> ParseTriggerReason(std::string_view name);

struct ActiveTask {
  std::string task_id;
  std::string title;
  TaskPhase phase = TaskPhase::kGathering;
  int progress = 0;  // 0-100
  int64_t started_at_ms = 0;
  bool operator==(const ActiveTask&) const = default;
};

struct ToolCallEntry {
  std::string tool_name;
  int64_t timestamp_ms = 0;
  std::string input_summary;   // at most 200 characters
  std::string output_summary;  // at most 500 characters
  int64_t duration_ms = 0;
  bool success = true;
  bool operator==(const ToolCallEntry&) const = default;
};

struct ContextSummary {
  std::string system_prompt_hash;  // SHA-256 hex of the system prompt (identity), or empty
  std::string gathering_results;
  std::vector<std::string> plan_outline;
  int64_t completed_steps = 0;
  std::string draft_content;
  std::vector<ToolCallEntry> tool_call_log;  // oldest first, newest 50 kept
  bool operator==(const ContextSummary&) const = default;
};

struct NatsPosition {
  std::string stream_name;
  std::string consumer_name;
  uint64_t last_acked_sequence = 0;    // the durable consumer's ack floor (stream sequence)
  uint64_t pending_message_count = 0;  // num_pending at checkpoint time
  bool operator==(const NatsPosition&) const = default;
};

// The last journal entry whose effect a checkpoint includes (docs/journal.md): restore folds the
// entries after `sequence`, the first of which must chain to `sha256`.
struct JournalPosition {
  int64_t sequence = 0;  // 0: no entry yet
  std::string sha256;    // SHA-256 hex of that entry; 64 zeros when sequence is 0
  bool operator==(const JournalPosition&) const = default;
};

struct Workspace {
  std::vector<std::string> modified_files;
  bool uncommitted_changes = false;
  std::string last_commit_hash;
  std::string branch_name;
  bool operator==(const Workspace&) const = default;
};

// The context summary encrypted at rest (schema version 2; docs/encryption.md). The binary
// fields are standard base64 with padding.
struct EncryptedContextSummary {
  std::string alg;               // "A256GCM"
  std::string key_id;            // 16 lower-case hex characters
  std::string nonce;             // base64 of the 12-byte GCM nonce
  std::string ciphertext;        // base64 of the ciphertext followed by the 16-byte tag
  std::string plaintext_sha256;  // contentSha256 of the plaintext (version 1) document
  int64_t plaintext_size_bytes = 0;  // sizeBytes of the plaintext document
  bool operator==(const EncryptedContextSummary&) const = default;
};

// --- the tool-call ledger (schema version 2; docs/tool-call-ledger.md) ---
enum class ToolEffect { kPure, kRead, kIdempotent, kWrite };
// started: begun by this sidecar's run; outcome_unknown: begun before a restart (or begun again
// while open) and never ended; completed: ended or reconciled.
enum class LedgerCallState { kStarted, kOutcomeUnknown, kCompleted };
std::string_view ToolEffectName(ToolEffect effect);  // "pure", "read", "idempotent", "write"
std::optional<ToolEffect> ParseToolEffect(std::string_view name);
std::string_view LedgerCallStateName(LedgerCallState state);  // "started", ...
std::optional<LedgerCallState> ParseLedgerCallState(std::string_view name);

struct LedgerResult {
  bool success = true;
  std::string output_summary;  // at most 500 characters
  int64_t duration_ms = 0;
  std::string external_id;  // "" when none was given
  bool reconciled = false;  // set by a reconcile rather than an end
  bool operator==(const LedgerResult&) const = default;
};

struct LedgerCall {
  std::string call_id;
  std::string idempotency_key;
  std::string tool_name;
  ToolEffect effect = ToolEffect::kWrite;
  std::string args_sha256;    // 64 hex characters, or "" when not given
  std::string input_summary;  // at most 200 characters
  int64_t began_at_ms = 0;
  LedgerCallState state = LedgerCallState::kStarted;
  int64_t ended_at_ms = 0;             // 0 while open
  std::optional<LedgerResult> result;  // set when completed
  bool operator==(const LedgerCall&) const = default;
};

struct Ledger {
  std::vector<LedgerCall> open;       // started or outcome_unknown, oldest first
  std::vector<LedgerCall> completed;  // the completed-key index, oldest end first
  bool operator==(const Ledger&) const = default;
};
// --- end of the ledger block ---

struct Checkpoint {
  int schema_version = kSchemaVersion;
  std::string checkpoint_id;  // UUID v4
  std::string agent_id;
  int64_t timestamp_ms = 0;
  int64_t sequence_number = 0;  // >= 1, strictly increasing per agent
  std::optional<ActiveTask> active_task;
  ContextSummary context_summary;  // empty when encrypted_context_summary is set
  // Set only in the stored form of an encrypted checkpoint (schema version 2), in place of
  // context_summary.
  std::optional<EncryptedContextSummary> encrypted_context_summary;
  std::optional<NatsPosition> nats_position;  // null when no JetStream consumer is configured
  std::optional<Workspace> workspace;         // null when no workspace is configured
  // Absent in checkpoints written without a journal (before it existed, or memory durability).
  std::optional<JournalPosition> journal;
  // Schema version 2: the tool-call ledger (absent in version 1 documents).
  std::optional<Ledger> ledger;
  // --- approval gates (docs/gates.md) ---
  // The agent's gates as the compact JSON array gate/gate_record.h writes (keys sorted), or ""
  // when the agent has none; absent from the document then, so documents without gates keep
  // their bytes and hash. checkpoint/ checks only that it is a JSON array of objects.
  std::string gates;
  // --- end approval gates ---
  TriggerReason trigger_reason = TriggerReason::kPeriodic;
  int64_t size_bytes = 0;
  int ttl_days = 7;
  int64_t expire_at_ms = 0;     // timestamp + ttlDays
  std::string content_sha256;   // integrity hash; empty until sealed
  bool operator==(const Checkpoint&) const = default;
};

}  // namespace agentckpt
