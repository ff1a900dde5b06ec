// JSON encoding and decoding of the checkpoint document and its parts, with validation.
//
// Field names are exactly those of docs/checkpoint-format.md (camelCase). Decoding is strict:
// a missing or wrong-typed field, an unknown field, an unknown phase or trigger, or a value out
// of range is kInvalidArgument whose message starts with the field's path, e.g.
// "contextSummary.toolCallLog[3].durationMs: expected an integer". A document of a newer schema
// version is kFailedPrecondition. Nothing here throws; all functions are thread-safe.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint.h"
#include "common/status.h"

namespace agentckpt {

// Parses `text` and decodes a whole checkpoint. The document may carry contentSha256 (it is
// copied, not verified: see canonical.h for verification) or not.
StatusOr<Checkpoint> CheckpointFromJson(std::string_view text);
StatusOr<Checkpoint> CheckpointFromJsonValue(const nlohmann::json& j);

// Encodes a checkpoint. Keys are sorted (nlohmann::json objects are ordered maps), so dump()
// of the result with no indent is the canonical form. contentSha256 is included only when
// `include_hash` and it is non-empty.
nlohmann::json CheckpointToJsonValue(const Checkpoint& cp, bool include_hash);
// The document as compact JSON, contentSha256 included when set.
std::string CheckpointToJson(const Checkpoint& cp);

// Parts, for the sidecar's context intake. `path` prefixes error messages.
StatusOr<ActiveTask> ActiveTaskFromJsonValue(const nlohmann::json& j, const std::string& path);
StatusOr<ContextSummary> ContextSummaryFromJsonValue(const nlohmann::json& j,
                                                     const std::string& path);
StatusOr<ToolCallEntry> ToolCallEntryFromJsonValue(const nlohmann::json& j,
                                                   const std::string& path);
StatusOr<Workspace> WorkspaceFromJsonValue(const nlohmann::json& j, const std::string& path);
StatusOr<NatsPosition> NatsPositionFromJsonValue(const nlohmann::json& j, const std::string& path);
nlohmann::json ActiveTaskToJsonValue(const ActiveTask& t);
nlohmann::json ContextSummaryToJsonValue(const ContextSummary& c);
nlohmann::json ToolCallEntryToJsonValue(const ToolCallEntry& e);
nlohmann::json WorkspaceToJsonValue(const Workspace& w);
nlohmann::json NatsPositionToJsonValue(const NatsPosition& n);
nlohmann::json EncryptedContextSummaryToJsonValue(const EncryptedContextSummary& e);

// Applies the schema's cutting rules in place (checkpoint/limits.h): newest 50 tool calls,
// summaries cut on UTF-8 character boundaries, gathering results head, draft tail.
void NormalizeContextSummary(ContextSummary* c);
ToolCallEntry NormalizeToolCallEntry(ToolCallEntry e);

// Checks every rule of the schema that decoding alone does not (ids, ranges, lengths,
// expireAt = timestamp + ttlDays). kInvalidArgument naming the field.
Status ValidateCheckpoint(const Checkpoint& cp);
Status ValidateContextSummary(const ContextSummary& c, const std::string& path);
// One tool-call entry; an error names the field as `prefix` + its name ("toolName: ...").
Status ValidateToolCallEntry(const ToolCallEntry& e, const std::string& prefix);
Status ValidateActiveTask(const ActiveTask& t, const std::string& path);
Status ValidateWorkspace(const Workspace& w, const std::string& path);
Status ValidateEncryptedContextSummary(const EncryptedContextSummary& e, const std::string& path);

}  // namespace agentckpt
