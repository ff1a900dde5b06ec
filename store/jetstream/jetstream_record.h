// The agent record of the JetStream store: one message per agent on <P>.agents.<agentId> in the
// stream <P>_AGENTS (one message kept per subject). It is the store's commit point: a Put, a
// lease change, a status change and a compaction each publish a new record that expects the
// previous one's stream sequence, so every change of an agent is serialised by the stream
// (compare-and-set). The record lists the agent's committed checkpoints; a checkpoint document
// stored on <P>.ckpt.<agentId>.<checkpointId> that the record does not list is not part of the
// store (a writer that lost its compare-and-set, or crashed, left it). Format in
// docs/checkpoint-format.md "JetStream store". Also the two wire decoders of JetStream's API
// replies. Pure functions; thread-safe; never throw.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

// One committed checkpoint as the record lists it.
struct JsCheckpointRef {
  int64_t sequence = 0;
  std::string checkpoint_id;
  int64_t timestamp_ms = 0;
  TriggerReason trigger_reason = TriggerReason::kPeriodic;
  int64_t size_bytes = 0;
  int64_t expire_at_ms = 0;
  std::string content_sha256;
  bool operator==(const JsCheckpointRef&) const = default;
};

struct JsAgentRecord {
  std::string agent_id;
  std::string status;
  int64_t updated_at_ms = 0;
  int64_t last_sequence = 0;
  std::string lease_holder;
  int64_t lease_epoch = 0;
  int64_t lease_expires_at_ms = 0;
  int64_t journal_compacted = 0;             // journal entries at or below are deleted
  std::vector<JsCheckpointRef> checkpoints;  // newest (highest sequence) first
  bool operator==(const JsAgentRecord&) const = default;
};

// The record's stored form: compact JSON with "v":1.
std::string EncodeAgentRecord(const JsAgentRecord& record);
// Parses the stored form strictly. kDataLoss naming what is wrong.
StatusOr<JsAgentRecord> DecodeAgentRecord(std::string_view text);

// The wire forms of a JetStream API reply's message (JetStreamApi): standard base64 (with
// padding), kDataLoss on bad input; a NATS header block ("NATS/1.0\r\nKey: Value\r\n\r\n"),
// the first value of each key.
StatusOr<std::string> DecodeBase64(std::string_view text);
std::map<std::string, std::string> ParseNatsHeaders(std::string_view block);

// The public view of the record (CheckpointStore::GetAgent).
AgentRecord ToAgentRecord(const JsAgentRecord& record);
// The listing row of a committed checkpoint.
CheckpointInfo ToCheckpointInfo(const std::string& agent_id, const JsCheckpointRef& ref);

}  // namespace agentckpt
