// The checkpoint document, schema version 1 (see docs/checkpoint-format.md).
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

inline constexpr int kSchemaVersion = 1;
// Schema version 2 is version 1 with contextSummary stored encrypted (encryptedContextSummary in
// its place; docs/encryption.md). Plaintext documents are still written as version 1.
inline constexpr int kEncryptedSchemaVersion = 2;
inline constexpr int kMaxReadableSchemaVersion = kEncryptedSchemaVersion;

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
