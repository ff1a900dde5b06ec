#include "checkpoint/ledger_json.h"

#include <set>

#include "checkpoint/limits.h"
#include "common/sha256.h"
#include "common/time_format.h"
#include "common/utf8.h"

namespace agentckpt {

using json = nlohmann::json;

namespace {

Status Bad(const std::string& path, const std::string& reason) {
  return InvalidArgumentError(path + ": " + reason);
}

// Strict member access over one object: every member must be read exactly once.
class Members {
 public:
  Members(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) status_ = Bad(Path(""), "expected an object");
  }
  std::string Path(const std::string& key) const {
    if (key.empty()) return path_.empty() ? "document" : path_;
    return path_.empty() ? key : path_ + "." + key;
  }
  const json* Get(const char* key) {
    if (!status_.ok()) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end()) {
      status_ = Bad(Path(key), "missing field");
      return nullptr;
    }
    seen_.insert(key);
    return &*it;
  }
  bool String(const char* key, std::string* out) {
    const json* v = Get(key);
    if (v == nullptr) return false;
    if (!v->is_string()) return Fail(key, "expected a string");
    *out = v->get<std::string>();
    return true;
  }
  bool Int(const char* key, int64_t* out) {
    const json* v = Get(key);
    if (v == nullptr) return false;
    if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() > INT64_MAX) ||
        v->get<int64_t>() < 0) {
      return Fail(key, "expected a non-negative integer");
    }
    *out = v->get<int64_t>();
    return true;
  }
  bool Bool(const char* key, bool* out) {
    const json* v = Get(key);
    if (v == nullptr) return false;
    if (!v->is_boolean()) return Fail(key, "expected a boolean");
    *out = v->get<bool>();
    return true;
  }
  bool Time(const char* key, int64_t* out) {
    std::string text;
    if (!String(key, &text)) return false;
    auto t = ParseRfc3339Millis(text);
    if (!t.ok()) return Fail(key, "expected an RFC 3339 timestamp");
    *out = *t;
    return true;
  }
  bool Fail(const std::string& key, const std::string& reason) {
    if (status_.ok()) status_ = Bad(Path(key), reason);
    return false;
  }
  Status Finish() {
    if (!status_.ok()) return status_;
    for (const auto& [key, value] : j_.items()) {
      if (seen_.count(key) == 0) return Bad(Path(key), "unknown field");
    }
    return OkStatus();
  }

 private:
  const json& j_;
  std::string path_;
  std::set<std::string> seen_;
  Status status_;
};

StatusOr<LedgerResult> DecodeResult(const json& j, const std::string& path) {
  Members m(j, path);
  LedgerResult r;
  m.Bool("success", &r.success);
  m.String("outputSummary", &r.output_summary);
  m.Int("durationMs", &r.duration_ms);
  if (const json* id = m.Get("externalId"); id != nullptr && !id->is_null()) {
    if (!id->is_string()) {
      m.Fail("externalId", "expected a string or null");
    } else {
      r.external_id = id->get<std::string>();
    }
  }
  m.Bool("reconciled", &r.reconciled);
  if (Status s = m.Finish(); !s.ok()) return s;
  return r;
}

}  // namespace

json LedgerCallToJsonValue(const LedgerCall& c) {
  json result = nullptr;
  if (c.result) {
    result = {
        {"success", c.result->success},
        {"outputSummary", c.result->output_summary},
        {"durationMs", c.result->duration_ms},
        {"externalId", c.result->external_id.empty() ? json(nullptr) : json(c.result->external_id)},
        {"reconciled", c.result->reconciled}};
  }
  return json{
      {"callId", c.call_id},
      {"idempotencyKey", c.idempotency_key},
      {"toolName", c.tool_name},
      {"effect", ToolEffectName(c.effect)},
      {"argsSha256", c.args_sha256},
      {"inputSummary", c.input_summary},
      {"beganAt", FormatRfc3339Millis(c.began_at_ms)},
      {"state", LedgerCallStateName(c.state)},
      {"endedAt", c.ended_at_ms > 0 ? json(FormatRfc3339Millis(c.ended_at_ms)) : json(nullptr)},
      {"result", std::move(result)}};
}

json LedgerToJsonValue(const Ledger& l) {
  json open = json::array();
  json completed = json::array();
  for (const LedgerCall& c : l.open) open.push_back(LedgerCallToJsonValue(c));
  for (const LedgerCall& c : l.completed) completed.push_back(LedgerCallToJsonValue(c));
  return json{{"openCalls", std::move(open)}, {"completed", std::move(completed)}};
}

StatusOr<LedgerCall> LedgerCallFromJsonValue(const json& j, const std::string& path) {
  Members m(j, path);
  LedgerCall c;
  std::string effect, state;
  m.String("callId", &c.call_id);
  m.String("idempotencyKey", &c.idempotency_key);
  m.String("toolName", &c.tool_name);
  if (m.String("effect", &effect)) {
    auto e = ParseToolEffect(effect);
    if (!e) m.Fail("effect", "unknown effect \"" + effect + "\" (pure, read, idempotent, write)");
    if (e) c.effect = *e;
  }
  m.String("argsSha256", &c.args_sha256);
  m.String("inputSummary", &c.input_summary);
  m.Time("beganAt", &c.began_at_ms);
  if (m.String("state", &state)) {
    auto s = ParseLedgerCallState(state);
    if (!s) m.Fail("state", "unknown state \"" + state + "\"");
    if (s) c.state = *s;
  }
  if (const json* ended = m.Get("endedAt"); ended != nullptr && !ended->is_null()) {
    auto t = ended->is_string() ? ParseRfc3339Millis(ended->get<std::string>())
                                : StatusOr<int64_t>(InvalidArgumentError(""));
    if (!t.ok()) m.Fail("endedAt", "expected an RFC 3339 timestamp or null");
    if (t.ok()) c.ended_at_ms = *t;
  }
  if (const json* result = m.Get("result"); result != nullptr && !result->is_null()) {
    auto r = DecodeResult(*result, m.Path("result"));
    if (!r.ok()) return r.status();
    c.result = std::move(r).value();
  }
  if (Status s = m.Finish(); !s.ok()) return s;
  return c;
}

StatusOr<Ledger> LedgerFromJsonValue(const json& j, const std::string& path) {
  Members m(j, path);
  Ledger l;
  for (const char* key : {"openCalls", "completed"}) {
    const json* list = m.Get(key);
    if (list == nullptr) break;
    if (!list->is_array()) return Bad(m.Path(key), "expected an array");
    auto& out = std::string(key) == "openCalls" ? l.open : l.completed;
    for (size_t i = 0; i < list->size(); ++i) {
      auto c = LedgerCallFromJsonValue((*list)[i], m.Path(key) + "[" + std::to_string(i) + "]");
      if (!c.ok()) return c.status();
      out.push_back(std::move(c).value());
    }
  }
  if (Status s = m.Finish(); !s.ok()) return s;
  return l;
}

namespace {

// `path` + `member` names the field; the name is built only for an error (a checkpoint carries up
// to CKPT_LEDGER_KEEP calls, each checked on every write).
Status CheckText(const std::string& s, const std::string& path, const char* member,
                 size_t max_chars, bool empty_ok) {
  if (!IsValidUtf8(s)) return Bad(path + member, "not valid UTF-8");
  if (!empty_ok && s.empty()) return Bad(path + member, "must not be empty");
  if (s.size() > max_chars && Utf8Length(s) > max_chars) {
    return Bad(path + member, "longer than " + std::to_string(max_chars) + " characters");
  }
  return OkStatus();
}

Status ValidateCall(const LedgerCall& c, const std::string& path, bool open) {
  if (Status s = CheckText(c.call_id, path, ".callId", limits::kShortTextChars, false); !s.ok()) {
    return s;
  }
  if (Status s =
          CheckText(c.idempotency_key, path, ".idempotencyKey", limits::kShortTextChars, false);
      !s.ok()) {
    return s;
  }
  if (Status s = CheckText(c.tool_name, path, ".toolName", limits::kToolNameChars, false);
      !s.ok()) {
    return s;
  }
  if (!c.args_sha256.empty() && !IsSha256Hex(c.args_sha256)) {
    return Bad(path + ".argsSha256", "expected 64 lower-case hex characters or \"\"");
  }
  if (Status s =
          CheckText(c.input_summary, path, ".inputSummary", limits::kToolInputSummaryChars, true);
      !s.ok()) {
    return s;
  }
  if (open && (c.state == LedgerCallState::kCompleted || c.result)) {
    return Bad(path + ".state", "an open call is started or outcome_unknown, without a result");
  }
  if (!open) {
    if (c.state != LedgerCallState::kCompleted || !c.result) {
      return Bad(path + ".state", "a completed call is completed, with a result");
    }
    if (Status s = CheckText(c.result->output_summary, path, ".result.outputSummary",
                             limits::kToolOutputSummaryChars, true);
        !s.ok()) {
      return s;
    }
    if (Status s = CheckText(c.result->external_id, path, ".result.externalId",
                             limits::kShortTextChars, true);
        !s.ok()) {
      return s;
    }
  }
  return OkStatus();
}

}  // namespace

Status ValidateLedger(const Ledger& l, const std::string& path) {
  for (size_t i = 0; i < l.open.size(); ++i) {
    Status s = ValidateCall(l.open[i], path + ".openCalls[" + std::to_string(i) + "]", true);
    if (!s.ok()) return s;
  }
  for (size_t i = 0; i < l.completed.size(); ++i) {
    Status s = ValidateCall(l.completed[i], path + ".completed[" + std::to_string(i) + "]", false);
    if (!s.ok()) return s;
  }
  return OkStatus();
}

}  // namespace agentckpt
