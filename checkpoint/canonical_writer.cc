#include "checkpoint/canonical_writer.h"

#include <charconv>
#include <cstdint>
#include <string_view>

#include "checkpoint/ledger_json.h"
#include "common/json_string.h"
#include "common/time_format.h"
#include "common/utf8.h"

namespace agentckpt::internal {
namespace {

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}

  // Object members are written by the caller in sorted key order.
  void Key(const char* key, bool first) {
    if (!first) out_->push_back(',');
    out_->push_back('"');
    out_->append(key);
    out_->append("\":", 2);
  }
  void Int(int64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_->append(buf, static_cast<size_t>(r.ptr - buf));
  }
  void UInt(uint64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_->append(buf, static_cast<size_t>(r.ptr - buf));
  }
  void Bool(bool v) { out_->append(v ? "true" : "false"); }
  void Null() { out_->append("null", 4); }
  // A string known to need no escaping: an enum's name, a formatted time.
  void Plain(std::string_view text) {
    out_->push_back('"');
    out_->append(text);
    out_->push_back('"');
  }
  void Time(int64_t ms) { Plain(FormatRfc3339Millis(ms)); }
  // RFC 8785 / nlohmann escaping: '"', '\\', \b \f \n \r \t, other C0 controls as \u00xx. Bytes
  // are not checked for UTF-8: a sealed checkpoint's text was validated by Seal.
  void String(const std::string& s) { AppendJsonStringUnchecked(s, out_); }
  void StringArray(const std::vector<std::string>& items) {
    out_->push_back('[');
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out_->push_back(',');
      String(items[i]);
    }
    out_->push_back(']');
  }
  void Open() { out_->push_back('{'); }
  void Close() { out_->push_back('}'); }
  std::string* out() { return out_; }

 private:
  std::string* out_;
};

void WriteActiveTask(Writer& w, const ActiveTask& t) {
  w.Open();
  w.Key("phase", true);
  w.Plain(TaskPhaseName(t.phase));
  w.Key("progress", false);
  w.Int(t.progress);
  w.Key("startedAt", false);
  w.Time(t.started_at_ms);
  w.Key("taskId", false);
  w.String(t.task_id);
  w.Key("title", false);
  w.String(t.title);
  w.Close();
}

void WriteToolCall(Writer& w, const ToolCallEntry& e) {
  w.Open();
  w.Key("durationMs", true);
  w.Int(e.duration_ms);
  w.Key("inputSummary", false);
  w.String(e.input_summary);
  w.Key("outputSummary", false);
  w.String(e.output_summary);
  w.Key("success", false);
  w.Bool(e.success);
  w.Key("timestamp", false);
  w.Time(e.timestamp_ms);
  w.Key("toolName", false);
  w.String(e.tool_name);
  w.Close();
}

void WriteContextSummary(Writer& w, const ContextSummary& c) {
  w.Open();
  w.Key("completedSteps", true);
  w.Int(c.completed_steps);
  w.Key("draftContent", false);
  w.String(c.draft_content);
  w.Key("gatheringResults", false);
  w.String(c.gathering_results);
  w.Key("planOutline", false);
  w.StringArray(c.plan_outline);
  w.Key("systemPromptHash", false);
  w.String(c.system_prompt_hash);
  w.Key("toolCallLog", false);
  w.out()->push_back('[');
  for (size_t i = 0; i < c.tool_call_log.size(); ++i) {
    if (i > 0) w.out()->push_back(',');
    WriteToolCall(w, c.tool_call_log[i]);
  }
  w.out()->push_back(']');
  w.Close();
}

// The member itself ("encryptedContextSummary" sorts between "contextSummary" and "expireAt").
void WriteEncryptedContextSummary(Writer& w, const EncryptedContextSummary& e) {
  w.Key("encryptedContextSummary", false);
  w.Open();
  w.Key("alg", true);
  w.String(e.alg);
  w.Key("ciphertext", false);
  w.String(e.ciphertext);
  w.Key("keyId", false);
  w.String(e.key_id);
  w.Key("nonce", false);
  w.String(e.nonce);
  w.Key("plaintextSha256", false);
  w.String(e.plaintext_sha256);
  w.Key("plaintextSizeBytes", false);
  w.Int(e.plaintext_size_bytes);
  w.Close();
}

void WriteNatsPosition(Writer& w, const NatsPosition& n) {
  w.Open();
  w.Key("consumerName", true);
  w.String(n.consumer_name);
  w.Key("lastAckedSequence", false);
  w.UInt(n.last_acked_sequence);
  w.Key("pendingMessageCount", false);
  w.UInt(n.pending_message_count);
  w.Key("streamName", false);
  w.String(n.stream_name);
  w.Close();
}

void WriteWorkspace(Writer& w, const Workspace& ws) {
  w.Open();
  w.Key("branchName", true);
  w.String(ws.branch_name);
  w.Key("lastCommitHash", false);
  w.String(ws.last_commit_hash);
  w.Key("modifiedFiles", false);
  w.StringArray(ws.modified_files);
  w.Key("uncommittedChanges", false);
  w.Bool(ws.uncommitted_changes);
  w.Close();
}

// The ledger as nlohmann's compact dump of LedgerToJsonValue writes it (its keys in sorted
// order), written directly: with CKPT_LEDGER_KEEP calls kept it is most of a checkpoint (about
// 0.9 MB for 1,000 calls), and building and dumping the JSON tree was three quarters of the time a
// checkpoint took to write. canonical_test holds the two to the same bytes.
void WriteLedgerCall(Writer& w, const LedgerCall& c) {
  w.Open();
  w.Key("argsSha256", true);
  w.String(c.args_sha256);
  w.Key("beganAt", false);
  w.Time(c.began_at_ms);
  w.Key("callId", false);
  w.String(c.call_id);
  w.Key("effect", false);
  w.Plain(ToolEffectName(c.effect));
  w.Key("endedAt", false);
  if (c.ended_at_ms > 0) {
    w.Time(c.ended_at_ms);
  } else {
    w.Null();
  }
  w.Key("idempotencyKey", false);
  w.String(c.idempotency_key);
  w.Key("inputSummary", false);
  w.String(c.input_summary);
  w.Key("result", false);
  if (c.result) {
    const LedgerResult& r = *c.result;
    w.Open();
    w.Key("durationMs", true);
    w.Int(r.duration_ms);
    w.Key("externalId", false);
    if (r.external_id.empty()) {
      w.Null();
    } else {
      w.String(r.external_id);
    }
    w.Key("outputSummary", false);
    w.String(r.output_summary);
    w.Key("reconciled", false);
    w.Bool(r.reconciled);
    w.Key("success", false);
    w.Bool(r.success);
    w.Close();
  } else {
    w.Null();
  }
  w.Key("state", false);
  w.Plain(LedgerCallStateName(c.state));
  w.Key("toolName", false);
  w.String(c.tool_name);
  w.Close();
}

// Whether every string of the call is well-formed UTF-8 (the enum names and times are ASCII).
bool LedgerCallIsUtf8(const LedgerCall& c) {
  return IsValidUtf8(c.args_sha256) && IsValidUtf8(c.call_id) && IsValidUtf8(c.idempotency_key) &&
         IsValidUtf8(c.input_summary) && IsValidUtf8(c.tool_name) &&
         (!c.result ||
          (IsValidUtf8(c.result->external_id) && IsValidUtf8(c.result->output_summary)));
}

void WriteLedger(Writer& w, const Ledger& l) {
  // A string that is not well-formed UTF-8 (never in a validated checkpoint: Seal validates
  // first) goes through the library, which replaces the bad bytes as it always has.
  for (const auto* calls : {&l.completed, &l.open}) {
    for (const LedgerCall& c : *calls) {
      if (!LedgerCallIsUtf8(c)) {
        w.out()->append(
            LedgerToJsonValue(l).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        return;
      }
    }
  }
  w.Open();
  bool first_member = true;
  for (const auto& [key, calls] :
       {std::pair<const char*, const std::vector<LedgerCall>*>{"completed", &l.completed},
        {"openCalls", &l.open}}) {
    w.Key(key, first_member);
    first_member = false;
    w.out()->push_back('[');
    for (size_t i = 0; i < calls->size(); ++i) {
      if (i > 0) w.out()->push_back(',');
      WriteLedgerCall(w, (*calls)[i]);
    }
    w.out()->push_back(']');
  }
  w.Close();
}

}  // namespace

void WriteCanonicalJson(const Checkpoint& cp, bool include_hash, std::string* out,
                        size_t* size_pos) {
  Writer w(out);
  w.Open();
  w.Key("activeTask", true);
  if (cp.active_task) {
    WriteActiveTask(w, *cp.active_task);
  } else {
    w.Null();
  }
  w.Key("agentId", false);
  w.String(cp.agent_id);
  w.Key("checkpointId", false);
  w.String(cp.checkpoint_id);
  if (include_hash && !cp.content_sha256.empty()) {
    w.Key("contentSha256", false);
    w.String(cp.content_sha256);
  }
  if (cp.encrypted_context_summary) {
    WriteEncryptedContextSummary(w, *cp.encrypted_context_summary);
  } else {
    w.Key("contextSummary", false);
    WriteContextSummary(w, cp.context_summary);
  }
  w.Key("expireAt", false);
  w.Time(cp.expire_at_ms);
  if (!cp.gates.empty()) {  // written only when set, like journal: older documents keep their hash
    w.Key("gates", false);
    out->append(cp.gates);  // already canonical: compact, keys sorted (nlohmann's dump)
  }
  if (cp.journal) {  // written only when set, so older documents keep their bytes and hash
    w.Key("journal", false);
    w.Open();
    w.Key("sequence", true);
    w.Int(cp.journal->sequence);
    w.Key("sha256", false);
    w.String(cp.journal->sha256);
    w.Close();
  }
  if (cp.ledger) {  // schema version 2
    w.Key("ledger", false);
    WriteLedger(w, *cp.ledger);
  }
  w.Key("natsPosition", false);
  if (cp.nats_position) {
    WriteNatsPosition(w, *cp.nats_position);
  } else {
    w.Null();
  }
  w.Key("schemaVersion", false);
  w.Int(cp.schema_version);
  w.Key("sequenceNumber", false);
  w.Int(cp.sequence_number);
  w.Key("sizeBytes", false);
  if (size_pos != nullptr) {
    *size_pos = out->size();
  } else {
    w.Int(cp.size_bytes);
  }
  w.Key("timestamp", false);
  w.Time(cp.timestamp_ms);
  w.Key("triggerReason", false);
  w.Plain(TriggerReasonName(cp.trigger_reason));
  w.Key("ttlDays", false);
  w.Int(cp.ttl_days);
  w.Key("workspace", false);
  if (cp.workspace) {
    WriteWorkspace(w, *cp.workspace);
  } else {
    w.Null();
  }
  w.Close();
}

}  // namespace agentckpt::internal
