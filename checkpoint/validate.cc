// Normalization (the schema's cutting rules) and validation of checkpoint documents.
#include <algorithm>
#include <string>

#include "checkpoint/checkpoint_json.h"
#include "checkpoint/ledger_json.h"
#include "checkpoint/limits.h"
#include "common/ids.h"
#include "common/sha256.h"
#include "common/utf8.h"

namespace agentckpt {
namespace {

constexpr int64_t kMillisPerDay = 86400000;

Status Bad(const std::string& path, const std::string& reason) {
  return InvalidArgumentError(path + ": " + reason);
}

// Why `s` is not acceptable text, or "" when it is. Kept apart from the field's path, which is
// built only for a field that fails (the tool-call log alone has 150 text fields).
std::string TextProblem(const std::string& s, size_t max_chars, bool allow_empty) {
  if (!IsValidUtf8(s)) return "not valid UTF-8";
  if (!allow_empty && s.empty()) return "must not be empty";
  if (s.size() <= max_chars) return std::string();  // bytes >= characters
  size_t n = Utf8Length(s);
  if (n > max_chars) {
    return "longer than " + std::to_string(max_chars) + " characters (" + std::to_string(n) + ")";
  }
  return std::string();
}

Status CheckText(const std::string& s, const std::string& path, size_t max_chars,
                 bool allow_empty) {
  std::string why = TextProblem(s, max_chars, allow_empty);
  return why.empty() ? OkStatus() : Bad(path, why);
}

bool IsHex(const std::string& s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Standard base64 alphabet with '=' padding only at the end (length checked by the caller).
bool IsBase64(const std::string& s) {
  size_t pad = 0;
  for (char c : s) {
    bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '+' || c == '/';
    if (c == '=') {
      ++pad;
    } else if (!alpha || pad > 0) {
      return false;
    }
  }
  return pad <= 2;
}

std::string Cut(const std::string& s, size_t max_chars) {
  return std::string(Utf8TruncateChars(s, max_chars));
}

// The last `max_chars` characters of `s`.
std::string Tail(const std::string& s, size_t max_chars) {
  size_t n = Utf8Length(s);
  if (n <= max_chars) return s;
  size_t skip = n - max_chars;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) {
      if (skip == 0) break;
      --skip;
    }
  }
  return s.substr(i);
}

}  // namespace

// Makes `*s` valid UTF-8 of at most `max_chars` characters, keeping its head (or its tail), in
// place; strings that already fit are not copied.
static void Fit(std::string* s, size_t max_chars, bool keep_tail) {
  if (!IsValidUtf8(*s)) *s = Utf8Sanitize(*s);
  if (s->size() <= max_chars) return;  // bytes >= characters: it fits
  *s = keep_tail ? Tail(*s, max_chars) : Cut(*s, max_chars);
}

ToolCallEntry NormalizeToolCallEntry(ToolCallEntry e) {
  Fit(&e.input_summary, limits::kToolInputSummaryChars, false);
  Fit(&e.output_summary, limits::kToolOutputSummaryChars, false);
  return e;
}

void NormalizeContextSummary(ContextSummary* c) {
  auto& log = c->tool_call_log;
  if (log.size() > limits::kToolCallLogEntries) {
    log.erase(log.begin(), log.end() - static_cast<long>(limits::kToolCallLogEntries));
  }
  for (auto& e : log) {
    Fit(&e.input_summary, limits::kToolInputSummaryChars, false);
    Fit(&e.output_summary, limits::kToolOutputSummaryChars, false);
  }
  Fit(&c->gathering_results, limits::kGatheringResultsChars, false);
  Fit(&c->draft_content, limits::kDraftContentChars, true);
  for (auto& item : c->plan_outline) Fit(&item, limits::kPlanItemChars, false);
}

Status ValidateActiveTask(const ActiveTask& t, const std::string& path) {
  if (auto s = CheckText(t.task_id, path + ".taskId", limits::kShortTextChars, false); !s.ok()) {
    return s;
  }
  if (auto s = CheckText(t.title, path + ".title", limits::kShortTextChars, true); !s.ok()) {
    return s;
  }
  if (t.progress < 0 || t.progress > 100) {
    return Bad(path + ".progress", "must be between 0 and 100, got " + std::to_string(t.progress));
  }
  return OkStatus();
}

// Why `e` is not acceptable, or "" when it is; `*field` names the field at fault.
static std::string ToolCallEntryProblem(const ToolCallEntry& e, const char** field) {
  struct Text {
    const char* name;
    const std::string* value;
    size_t max_chars;
    bool may_be_empty;
  };
  for (const Text& t :
       {Text{"toolName", &e.tool_name, limits::kToolNameChars, false},
        Text{"inputSummary", &e.input_summary, limits::kToolInputSummaryChars, true},
        Text{"outputSummary", &e.output_summary, limits::kToolOutputSummaryChars, true}}) {
    if (std::string why = TextProblem(*t.value, t.max_chars, t.may_be_empty); !why.empty()) {
      *field = t.name;
      return why;
    }
  }
  *field = "durationMs";
  return e.duration_ms < 0 ? "must not be negative" : "";
}

Status ValidateToolCallEntry(const ToolCallEntry& e, const std::string& prefix) {
  const char* field = "";
  std::string why = ToolCallEntryProblem(e, &field);
  return why.empty() ? OkStatus() : Bad(prefix + field, why);
}

Status ValidateContextSummary(const ContextSummary& c, const std::string& path) {
  if (!c.system_prompt_hash.empty() && !IsSha256Hex(c.system_prompt_hash)) {
    return Bad(path + ".systemPromptHash", "expected 64 lower-case hex characters or empty");
  }
  if (auto s = CheckText(c.gathering_results, path + ".gatheringResults",
                         limits::kGatheringResultsChars, true);
      !s.ok()) {
    return s;
  }
  if (c.plan_outline.size() > limits::kPlanOutlineItems) {
    return Bad(path + ".planOutline",
               "more than " + std::to_string(limits::kPlanOutlineItems) + " items");
  }
  for (size_t i = 0; i < c.plan_outline.size(); ++i) {
    std::string why = TextProblem(c.plan_outline[i], limits::kPlanItemChars, true);
    if (!why.empty()) return Bad(path + ".planOutline[" + std::to_string(i) + "]", why);
  }
  if (c.completed_steps < 0) return Bad(path + ".completedSteps", "must not be negative");
  if (auto s = CheckText(c.draft_content, path + ".draftContent", limits::kDraftContentChars, true);
      !s.ok()) {
    return s;
  }
  if (c.tool_call_log.size() > limits::kToolCallLogEntries) {
    return Bad(path + ".toolCallLog",
               "more than " + std::to_string(limits::kToolCallLogEntries) + " entries");
  }
  for (size_t i = 0; i < c.tool_call_log.size(); ++i) {
    const char* field = "";
    std::string why = ToolCallEntryProblem(c.tool_call_log[i], &field);
    if (!why.empty()) return Bad(path + ".toolCallLog[" + std::to_string(i) + "]." + field, why);
  }
  return OkStatus();
}

Status ValidateWorkspace(const Workspace& w, const std::string& path) {
  if (w.modified_files.size() > limits::kModifiedFiles) {
    return Bad(path + ".modifiedFiles",
               "more than " + std::to_string(limits::kModifiedFiles) + " entries");
  }
  for (size_t i = 0; i < w.modified_files.size(); ++i) {
    auto s = CheckText(w.modified_files[i], path + ".modifiedFiles[" + std::to_string(i) + "]",
                       4096, false);
    if (!s.ok()) return s;
  }
  if (!w.last_commit_hash.empty() &&
      !((w.last_commit_hash.size() == 40 || w.last_commit_hash.size() == 64) &&
        IsHex(w.last_commit_hash))) {
    return Bad(path + ".lastCommitHash", "expected a 40- or 64-character lower-case hex id");
  }
  return CheckText(w.branch_name, path + ".branchName", limits::kShortTextChars, true);
}

Status ValidateEncryptedContextSummary(const EncryptedContextSummary& e, const std::string& path) {
  if (e.alg != "A256GCM") return Bad(path + ".alg", "unknown algorithm \"" + e.alg + "\"");
  if (e.key_id.size() != 16 || !IsHex(e.key_id)) {
    return Bad(path + ".keyId", "expected 16 lower-case hex characters");
  }
  // Standard base64 of 12 bytes.
  if (e.nonce.size() != 16 || !IsBase64(e.nonce)) {
    return Bad(path + ".nonce", "expected the base64 of 12 bytes");
  }
  // At least the 16-byte tag; the summary's own limits bound the rest.
  if (e.ciphertext.size() < 24 || e.ciphertext.size() > limits::kMaxCiphertextChars ||
      e.ciphertext.size() % 4 != 0 || !IsBase64(e.ciphertext)) {
    return Bad(path + ".ciphertext", "expected base64 of at most " +
                                         std::to_string(limits::kMaxCiphertextChars) +
                                         " characters holding at least a 16-byte tag");
  }
  if (!IsSha256Hex(e.plaintext_sha256)) {
    return Bad(path + ".plaintextSha256", "expected 64 lower-case hex characters");
  }
  return OkStatus();
}

Status ValidateCheckpoint(const Checkpoint& cp) {
  if (cp.encrypted_context_summary) {
    if (cp.schema_version != kEncryptedSchemaVersion) {
      return Bad("schemaVersion", "must be " + std::to_string(kEncryptedSchemaVersion) +
                                      " for an encrypted context summary");
    }
    if (!(cp.context_summary == ContextSummary{})) {
      return Bad("contextSummary", "must be empty when the summary is encrypted");
    }
    if (auto s = ValidateEncryptedContextSummary(*cp.encrypted_context_summary,
                                                 "encryptedContextSummary");
        !s.ok()) {
      return s;
    }
  } else if (cp.schema_version != kSchemaVersion && cp.schema_version != kLedgerlessSchemaVersion) {
    return Bad("schemaVersion", "must be " + std::to_string(kLedgerlessSchemaVersion) + " or " +
                                    std::to_string(kSchemaVersion));
  }
  if (cp.ledger) {
    if (cp.schema_version < kSchemaVersion) {
      return Bad("ledger", "needs schemaVersion " + std::to_string(kSchemaVersion));
    }
    if (auto s = ValidateLedger(*cp.ledger, "ledger"); !s.ok()) return s;
  }
  if (!IsUuidV4(cp.checkpoint_id)) return Bad("checkpointId", "expected a UUID v4");
  if (auto s = ValidateAgentId(cp.agent_id); !s.ok()) return Bad("agentId", s.message());
  if (cp.sequence_number < 1) return Bad("sequenceNumber", "must be at least 1");
  if (cp.active_task) {
    if (auto s = ValidateActiveTask(*cp.active_task, "activeTask"); !s.ok()) return s;
  }
  if (auto s = ValidateContextSummary(cp.context_summary, "contextSummary"); !s.ok()) return s;
  if (cp.nats_position) {
    if (auto s = CheckText(cp.nats_position->stream_name, "natsPosition.streamName",
                           limits::kShortTextChars, false);
        !s.ok()) {
      return s;
    }
    if (auto s = CheckText(cp.nats_position->consumer_name, "natsPosition.consumerName",
                           limits::kShortTextChars, false);
        !s.ok()) {
      return s;
    }
  }
  if (cp.workspace) {
    if (auto s = ValidateWorkspace(*cp.workspace, "workspace"); !s.ok()) return s;
  }
  if (cp.journal) {
    const std::string& h = cp.journal->sha256;
    if (cp.journal->sequence < 0) return Bad("journal.sequence", "must not be negative");
    if (h.size() != 64 || h.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return Bad("journal.sha256", "expected 64 lower-case hex characters");
    }
  }
  if (!cp.gates.empty()) {
    auto gates = nlohmann::json::parse(cp.gates, nullptr, /*allow_exceptions=*/false);
    if (gates.is_discarded() || !gates.is_array() ||
        !std::all_of(gates.begin(), gates.end(), [](const auto& g) { return g.is_object(); })) {
      return Bad("gates", "expected a JSON array of gate objects");
    }
  }
  if (cp.ttl_days < 1 || cp.ttl_days > limits::kMaxTtlDays) {
    return Bad("ttlDays", "must be between 1 and " + std::to_string(limits::kMaxTtlDays));
  }
  if (cp.expire_at_ms != cp.timestamp_ms + cp.ttl_days * kMillisPerDay) {
    return Bad("expireAt", "must equal timestamp + ttlDays");
  }
  if (cp.size_bytes < 0) return Bad("sizeBytes", "must not be negative");
  if (!cp.content_sha256.empty() && !IsSha256Hex(cp.content_sha256)) {
    return Bad("contentSha256", "expected 64 lower-case hex characters");
  }
  return OkStatus();
}

}  // namespace agentckpt
