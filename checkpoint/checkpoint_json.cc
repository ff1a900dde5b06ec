#include "checkpoint/checkpoint_json.h"

#include <limits>

#include "checkpoint/json_reader.h"
#include "checkpoint/ledger_json.h"
#include "checkpoint/limits.h"
#include "common/time_format.h"

namespace agentckpt {

using internal::ObjectReader;
using json = nlohmann::json;

namespace {

constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();

json NullOr(const json& j, bool present) { return present ? j : json(nullptr); }

}  // namespace

namespace {

StatusOr<ActiveTask> DecodeActiveTask(simdjson::dom::element j, const std::string& path) {
  ObjectReader r(j, path);
  ActiveTask t;
  std::string phase;
  int64_t progress = 0;
  r.String("taskId", &t.task_id);
  r.String("title", &t.title);
  if (r.String("phase", &phase)) {
    auto p = ParseTaskPhase(phase);
    if (!p) {
      r.Fail(r.FieldPath("phase"),
             "unknown phase \"" + phase + "\" (gathering, planning, executing or reviewing)");
    } else {
      t.phase = *p;
    }
  }
  if (r.Int("progress", 0, 100, &progress)) t.progress = static_cast<int>(progress);
  r.Timestamp("startedAt", &t.started_at_ms);
  r.RejectUnknown();
  if (!r.ok()) return r.status();
  return t;
}

StatusOr<ToolCallEntry> DecodeToolCallEntry(simdjson::dom::element j, const std::string& path) {
  ObjectReader r(j, path);
  ToolCallEntry e;
  r.String("toolName", &e.tool_name);
  r.Timestamp("timestamp", &e.timestamp_ms);
  r.String("inputSummary", &e.input_summary);
  r.String("outputSummary", &e.output_summary);
  r.Int("durationMs", 0, kMaxI64, &e.duration_ms);
  r.Bool("success", &e.success);
  r.RejectUnknown();
  if (!r.ok()) return r.status();
  return e;
}

StatusOr<ContextSummary> DecodeContextSummary(simdjson::dom::element j, const std::string& path) {
  ObjectReader r(j, path);
  ContextSummary c;
  r.String("systemPromptHash", &c.system_prompt_hash);
  r.String("gatheringResults", &c.gathering_results);
  r.StringArray("planOutline", &c.plan_outline);
  r.Int("completedSteps", 0, kMaxI64, &c.completed_steps);
  r.String("draftContent", &c.draft_content);
  simdjson::dom::element log;
  r.Member("toolCallLog", /*optional=*/false, &log);
  r.RejectUnknown();
  if (!r.ok()) return r.status();
  std::string log_path = r.FieldPath("toolCallLog");
  simdjson::dom::array entries;
  if (log.get_array().get(entries)) return InvalidArgumentError(log_path + ": expected an array");
  c.tool_call_log.reserve(entries.size());
  size_t i = 0;
  for (simdjson::dom::element entry : entries) {
    auto e = DecodeToolCallEntry(entry, log_path + "[" + std::to_string(i++) + "]");
    if (!e.ok()) return e.status();
    c.tool_call_log.push_back(std::move(e).value());
  }
  return c;
}

StatusOr<EncryptedContextSummary> DecodeEncryptedContextSummary(simdjson::dom::element j,
                                                                const std::string& path) {
  ObjectReader r(j, path);
  EncryptedContextSummary e;
  r.String("alg", &e.alg);
  r.String("keyId", &e.key_id);
  r.String("nonce", &e.nonce);
  r.String("ciphertext", &e.ciphertext);
  r.String("plaintextSha256", &e.plaintext_sha256);
  r.Int("plaintextSizeBytes", 0, kMaxI64, &e.plaintext_size_bytes);
  r.RejectUnknown();
  if (!r.ok()) return r.status();
  return e;
}

StatusOr<NatsPosition> DecodeNatsPosition(simdjson::dom::element j, const std::string& path) {
  ObjectReader r(j, path);
  NatsPosition n;
  r.String("streamName", &n.stream_name);
  r.String("consumerName", &n.consumer_name);
  r.UInt("lastAckedSequence", &n.last_acked_sequence);
  r.UInt("pendingMessageCount", &n.pending_message_count);
  r.RejectUnknown();
  if (!r.ok()) return r.status();
  return n;
}

StatusOr<Workspace> DecodeWorkspace(simdjson::dom::element j, const std::string& path) {
  ObjectReader r(j, path);
  Workspace w;
  r.StringArray("modifiedFiles", &w.modified_files);
  r.Bool("uncommittedChanges", &w.uncommitted_changes);
  r.String("lastCommitHash", &w.last_commit_hash);
  r.String("branchName", &w.branch_name);
  r.RejectUnknown();
  if (!r.ok()) return r.status();
  return w;
}

StatusOr<Checkpoint> DecodeCheckpoint(simdjson::dom::element j) {
  ObjectReader r(j, "");
  Checkpoint cp;
  int64_t version = 0;
  if (r.Int("schemaVersion", 1, std::numeric_limits<int32_t>::max(), &version) &&
      version > kMaxReadableSchemaVersion) {
    return FailedPreconditionError("schemaVersion: document has schema version " +
                                   std::to_string(version) + "; this agentckpt reads up to " +
                                   std::to_string(kMaxReadableSchemaVersion) +
                                   " (upgrade agentckpt)");
  }
  cp.schema_version = static_cast<int>(version);
  r.String("checkpointId", &cp.checkpoint_id);
  r.String("agentId", &cp.agent_id);
  r.Timestamp("timestamp", &cp.timestamp_ms);
  r.Int("sequenceNumber", 1, kMaxI64, &cp.sequence_number);
  std::string trigger;
  if (r.String("triggerReason", &trigger)) {
    auto t = ParseTriggerReason(trigger);
    if (!t) {
      r.Fail("triggerReason", "unknown trigger \"" + trigger +
                                  "\" (periodic, pre_compaction, task_phase_change, manual or "
                                  "pre_shutdown)");
    } else {
      cp.trigger_reason = *t;
    }
  }
  r.Int("sizeBytes", 0, kMaxI64, &cp.size_bytes);
  int64_t ttl = 0;
  if (r.Int("ttlDays", 1, limits::kMaxTtlDays, &ttl)) cp.ttl_days = static_cast<int>(ttl);
  simdjson::dom::element member;
  if (r.Member("expireAt", /*optional=*/true, &member)) r.Timestamp("expireAt", &cp.expire_at_ms);
  if (r.Member("contentSha256", /*optional=*/true, &member))
    r.String("contentSha256", &cp.content_sha256);
  simdjson::dom::element task, summary, nats, ws, journal, ledger, gates;
  const bool has_journal = r.Member("journal", /*optional=*/true, &journal);
  // Schema version 2: the tool-call ledger (never in a version 1 document).
  const bool has_ledger = version >= 2 && r.Member("ledger", /*optional=*/true, &ledger);
  const bool has_gates = r.Member("gates", /*optional=*/true, &gates);
  r.Member("activeTask", false, &task);
  // Version 2 may store the summary encrypted, under its own name (docs/encryption.md).
  simdjson::dom::element probe;
  const bool encrypted = version == kEncryptedSchemaVersion &&
                         r.Member("encryptedContextSummary", /*optional=*/true, &probe);
  r.Member(encrypted ? "encryptedContextSummary" : "contextSummary", false, &summary);
  r.Member("natsPosition", false, &nats);
  r.Member("workspace", false, &ws);
  r.RejectUnknown();
  if (!r.ok()) return r.status();
  if (!task.is_null()) {
    auto t = DecodeActiveTask(task, "activeTask");
    if (!t.ok()) return t.status();
    cp.active_task = std::move(t).value();
  }
  if (encrypted) {
    auto e = DecodeEncryptedContextSummary(summary, "encryptedContextSummary");
    if (!e.ok()) return e.status();
    cp.encrypted_context_summary = std::move(e).value();
  } else {
    auto c = DecodeContextSummary(summary, "contextSummary");
    if (!c.ok()) return c.status();
    cp.context_summary = std::move(c).value();
  }
  if (!nats.is_null()) {
    auto n = DecodeNatsPosition(nats, "natsPosition");
    if (!n.ok()) return n.status();
    cp.nats_position = std::move(n).value();
  }
  if (!ws.is_null()) {
    auto w = DecodeWorkspace(ws, "workspace");
    if (!w.ok()) return w.status();
    cp.workspace = std::move(w).value();
  }
  if (has_journal) {
    ObjectReader jr(journal, "journal");
    JournalPosition pos;
    jr.Int("sequence", 0, kMaxI64, &pos.sequence);
    jr.String("sha256", &pos.sha256);
    jr.RejectUnknown();
    if (!jr.ok()) return jr.status();
    cp.journal = std::move(pos);
  }
  if (has_ledger) {
    json lj = json::parse(simdjson::minify(ledger), nullptr, /*allow_exceptions=*/false);
    auto l = LedgerFromJsonValue(lj, "ledger");
    if (!l.ok()) return l.status();
    cp.ledger = std::move(l).value();
  }
  if (has_gates) {
    // Kept as canonical text: re-dumped by nlohmann (sorted keys), as the writer produced it.
    json parsed = json::parse(simdjson::minify(gates), nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_array()) {
      return InvalidArgumentError("gates: expected an array");
    }
    if (!parsed.empty()) cp.gates = parsed.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return cp;
}

}  // namespace

// Public entry points: parse with simdjson, decode strictly.
StatusOr<Checkpoint> CheckpointFromJson(std::string_view text) {
  auto root = internal::ParseJson(text);
  if (!root.ok()) return root.status();
  return DecodeCheckpoint(*root);
}

namespace {

// The nlohmann-facing decoders serialise and re-parse: they serve request bodies, not the hot
// path, and keep a single decoder for every input.
template <typename T, typename F>
StatusOr<T> ViaText(const json& j, const std::string& path, F decode) {
  std::string text;
  try {
    text = j.dump();
  } catch (const std::exception& e) {
    return InvalidArgumentError(path + ": cannot serialise: " + e.what());
  }
  auto root = internal::ParseJson(text);
  if (!root.ok()) return root.status();
  return decode(*root, path);
}

}  // namespace

StatusOr<Checkpoint> CheckpointFromJsonValue(const json& j) {
  return ViaText<Checkpoint>(
      j, "", [](simdjson::dom::element e, const std::string&) { return DecodeCheckpoint(e); });
}
StatusOr<ActiveTask> ActiveTaskFromJsonValue(const json& j, const std::string& path) {
  return ViaText<ActiveTask>(j, path, DecodeActiveTask);
}
StatusOr<ContextSummary> ContextSummaryFromJsonValue(const json& j, const std::string& path) {
  return ViaText<ContextSummary>(j, path, DecodeContextSummary);
}
StatusOr<ToolCallEntry> ToolCallEntryFromJsonValue(const json& j, const std::string& path) {
  return ViaText<ToolCallEntry>(j, path, DecodeToolCallEntry);
}
StatusOr<Workspace> WorkspaceFromJsonValue(const json& j, const std::string& path) {
  return ViaText<Workspace>(j, path, DecodeWorkspace);
}
StatusOr<NatsPosition> NatsPositionFromJsonValue(const json& j, const std::string& path) {
  return ViaText<NatsPosition>(j, path, DecodeNatsPosition);
}

json ActiveTaskToJsonValue(const ActiveTask& t) {
  return json{{"taskId", t.task_id},
              {"title", t.title},
              {"phase", TaskPhaseName(t.phase)},
              {"progress", t.progress},
              {"startedAt", FormatRfc3339Millis(t.started_at_ms)}};
}

json ToolCallEntryToJsonValue(const ToolCallEntry& e) {
  return json{{"toolName", e.tool_name},         {"timestamp", FormatRfc3339Millis(e.timestamp_ms)},
              {"inputSummary", e.input_summary}, {"outputSummary", e.output_summary},
              {"durationMs", e.duration_ms},     {"success", e.success}};
}

json ContextSummaryToJsonValue(const ContextSummary& c) {
  json log = json::array();
  for (const auto& e : c.tool_call_log) log.push_back(ToolCallEntryToJsonValue(e));
  return json{{"systemPromptHash", c.system_prompt_hash},
              {"gatheringResults", c.gathering_results},
              {"planOutline", c.plan_outline},
              {"completedSteps", c.completed_steps},
              {"draftContent", c.draft_content},
              {"toolCallLog", std::move(log)}};
}

json NatsPositionToJsonValue(const NatsPosition& n) {
  return json{{"streamName", n.stream_name},
              {"consumerName", n.consumer_name},
              {"lastAckedSequence", n.last_acked_sequence},
              {"pendingMessageCount", n.pending_message_count}};
}

json WorkspaceToJsonValue(const Workspace& w) {
  return json{{"modifiedFiles", w.modified_files},
              {"uncommittedChanges", w.uncommitted_changes},
              {"lastCommitHash", w.last_commit_hash},
              {"branchName", w.branch_name}};
}

json EncryptedContextSummaryToJsonValue(const EncryptedContextSummary& e) {
  return json{{"alg", e.alg},
              {"keyId", e.key_id},
              {"nonce", e.nonce},
              {"ciphertext", e.ciphertext},
              {"plaintextSha256", e.plaintext_sha256},
              {"plaintextSizeBytes", e.plaintext_size_bytes}};
}

json CheckpointToJsonValue(const Checkpoint& cp, bool include_hash) {
  json j{{"schemaVersion", cp.schema_version},
         {"checkpointId", cp.checkpoint_id},
         {"agentId", cp.agent_id},
         {"timestamp", FormatRfc3339Millis(cp.timestamp_ms)},
         {"sequenceNumber", cp.sequence_number},
         {"activeTask", cp.active_task ? ActiveTaskToJsonValue(*cp.active_task) : json(nullptr)},
         {"contextSummary", ContextSummaryToJsonValue(cp.context_summary)},
         {"natsPosition",
          NullOr(cp.nats_position ? NatsPositionToJsonValue(*cp.nats_position) : json(),
                 cp.nats_position.has_value())},
         {"workspace", NullOr(cp.workspace ? WorkspaceToJsonValue(*cp.workspace) : json(),
                              cp.workspace.has_value())},
         {"triggerReason", TriggerReasonName(cp.trigger_reason)},
         {"sizeBytes", cp.size_bytes},
         {"ttlDays", cp.ttl_days},
         {"expireAt", FormatRfc3339Millis(cp.expire_at_ms)}};
  if (include_hash && !cp.content_sha256.empty()) j["contentSha256"] = cp.content_sha256;
  if (cp.journal) {
    j["journal"] = {{"sequence", cp.journal->sequence}, {"sha256", cp.journal->sha256}};
  }
  if (cp.ledger) j["ledger"] = LedgerToJsonValue(*cp.ledger);
  if (!cp.gates.empty()) {
    j["gates"] = json::parse(cp.gates, nullptr, /*allow_exceptions=*/false);
  }
  if (cp.encrypted_context_summary) {
    j.erase("contextSummary");
    j["encryptedContextSummary"] =
        EncryptedContextSummaryToJsonValue(*cp.encrypted_context_summary);
  }
  return j;
}

std::string CheckpointToJson(const Checkpoint& cp) {
  return CheckpointToJsonValue(cp, /*include_hash=*/true)
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace agentckpt
