#include "context/context_state.h"

#include <algorithm>
#include <utility>

#include "checkpoint/checkpoint_json.h"
#include "checkpoint/json_value.h"
#include "checkpoint/limits.h"
#include "common/status_macros.h"
#include "context/summary_fields_patch.h"
#include "journal/journal_fold.h"

namespace agentckpt {

using nlohmann::json;

void ContextState::RedactToolCall(ToolCallEntry* entry) const {
  if (redactor_ == nullptr) return;
  redactor_->RedactInPlace(&entry->input_summary);
  redactor_->RedactInPlace(&entry->output_summary);
}

void ContextState::RedactChanged(std::string* text, const std::string* previous) const {
  if (redactor_ == nullptr) return;
  // Text the context already holds went through the redactor when it arrived (and markers do
  // not match again), so only new text is scanned.
  if (previous != nullptr && *text == *previous) return;
  redactor_->RedactInPlace(text);
}

StatusOr<ContextSummary> ContextState::DecodeSummary(const json& j,
                                                     const ContextSummary* previous) const {
  auto cs = ContextSummaryFromJsonValue(j, "contextSummary");
  if (!cs.ok()) return cs.status();
  ContextSummary& s = *cs;
  RedactSummaryText(&s, previous);
  for (ToolCallEntry& e : s.tool_call_log) RedactToolCall(&e);
  return std::move(s);
}

void ContextState::RedactSummaryText(ContextSummary* s, const ContextSummary* previous) const {
  // Redacted before the summaries are cut, so no secret is cut in half.
  RedactChanged(&s->gathering_results, previous ? &previous->gathering_results : nullptr);
  for (size_t i = 0; i < s->plan_outline.size(); ++i) {
    const bool kept = previous != nullptr && i < previous->plan_outline.size();
    RedactChanged(&s->plan_outline[i], kept ? &previous->plan_outline[i] : nullptr);
  }
  RedactChanged(&s->draft_content, previous ? &previous->draft_content : nullptr);
}

StatusOr<std::optional<ActiveTask>> ContextState::DecodeTask(const json& j) const {
  if (j.is_null()) return std::optional<ActiveTask>();
  auto t = ActiveTaskFromJsonValue(j, "activeTask");
  if (!t.ok()) return t.status();
  if (redactor_ != nullptr) redactor_->RedactInPlace(&t->title);
  RETURN_IF_ERROR(ValidateActiveTask(*t, "activeTask"));
  return std::optional<ActiveTask>(std::move(t).value());
}

StatusOr<std::optional<Workspace>> ContextState::DecodeWorkspace(const json& j) {
  if (j.is_null()) return std::optional<Workspace>();
  auto w = WorkspaceFromJsonValue(j, "workspace");
  if (!w.ok()) return w.status();
  RETURN_IF_ERROR(ValidateWorkspace(*w, "workspace"));
  return std::optional<Workspace>(std::move(w).value());
}

StatusOr<ContextState::Content> ContextState::Decode(const json& body) const {
  if (!body.is_object()) return InvalidArgumentError("document: expected an object");
  for (const auto& [key, value] : body.items()) {
    if (key != "activeTask" && key != "contextSummary" && key != "workspace") {
      return InvalidArgumentError(key + ": unknown field");
    }
  }
  Content c;
  auto summary = body.find("contextSummary");
  if (summary == body.end()) return InvalidArgumentError("contextSummary: missing field");
  ASSIGN_OR_RETURN(c.summary, DecodeSummary(*summary, nullptr));
  NormalizeContextSummary(&c.summary);
  RETURN_IF_ERROR(ValidateContextSummary(c.summary, "contextSummary"));
  auto task = body.find("activeTask");
  if (task != body.end()) {
    ASSIGN_OR_RETURN(c.active_task, DecodeTask(*task));
  }
  auto ws = body.find("workspace");
  if (ws != body.end()) {
    ASSIGN_OR_RETURN(c.workspace, DecodeWorkspace(*ws));
  }
  return c;
}

json ContextState::Encode(const Content& c) {
  json j = json::object();
  j["activeTask"] = c.active_task ? ActiveTaskToJsonValue(*c.active_task) : json(nullptr);
  j["contextSummary"] = ContextSummaryToJsonValue(c.summary);
  j["workspace"] = c.workspace ? WorkspaceToJsonValue(*c.workspace) : json(nullptr);
  return j;
}

namespace {
Status ShuttingDown() { return UnavailableError("the sidecar is shutting down"); }
}  // namespace

void ContextState::Freeze() {
  std::lock_guard<std::mutex> lock(mu_);
  frozen_ = true;
  gate_cv_.notify_all();  // gate waiters return at once
}

StatusOr<ContextUpdate> ContextState::Commit(
    Content next, JournalKind kind, const std::function<json(const Content&)>& payload,
    const std::function<void(const Content&, json*)>& update_encoded) {
  ContextUpdate u;
  const bool same = next == content_;
  if (journal_) {
    std::string text = same ? std::string() : DumpJsonValue(payload(next));
    ASSIGN_OR_RETURN(journal_position_, journal_(kind, text));
  }
  u.journal_sequence = journal_position_.sequence;
  u.tool_call_log_size = next.summary.tool_call_log.size();
  if (same) {
    u.revision = revision_;
    return u;
  }
  const auto& before = content_.active_task;
  const auto& after = next.active_task;
  u.phase_changed = after.has_value() && (!before.has_value() || before->phase != after->phase ||
                                          before->task_id != after->task_id);
  u.changed = true;
  update_encoded(next, &encoded_);
  content_ = std::move(next);
  u.revision = ++revision_;
  return u;
}

StatusOr<ContextUpdate> ContextState::Replace(const json& body) {
  ASSIGN_OR_RETURN(Content next, Decode(body));
  std::lock_guard<std::mutex> lock(mu_);
  if (frozen_) return ShuttingDown();
  json after;
  return Commit(
      std::move(next), JournalKind::kContextPut,
      [&after](const Content& c) {
        after = Encode(c);
        return after;
      },
      [&after](const Content& c, json* e) { *e = after.is_null() ? Encode(c) : std::move(after); });
}

StatusOr<ContextUpdate> ContextState::MergePatch(const json& patch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (frozen_) return ShuttingDown();
  if (auto parts = MergePatchParts(patch)) return std::move(*parts);
  json doc = encoded_;
  try {
    doc.merge_patch(patch);
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("document: cannot apply merge patch: ") + e.what());
  }
  ASSIGN_OR_RETURN(Content next, Decode(doc));
  // The journal records the effect (after redaction and cutting), not the request.
  json after;
  return Commit(
      std::move(next), JournalKind::kContextPatch,
      [&](const Content& c) {
        after = Encode(c);
        return MakeMergePatch(encoded_, after);
      },
      [&after](const Content& c, json* e) { *e = after.is_null() ? Encode(c) : std::move(after); });
}

std::optional<StatusOr<ContextUpdate>> ContextState::MergePatchParts(const json& patch) {
  if (!patch.is_object()) return std::nullopt;
  auto summary_patch = patch.find("contextSummary");
  if (summary_patch != patch.end() && !summary_patch->is_object()) return std::nullopt;
  for (const auto& [key, value] : patch.items()) {
    if (key == "activeTask" || key == "contextSummary" || key == "workspace") continue;
    if (!value.is_null()) return InvalidArgumentError(key + ": unknown field");
  }
  const bool keep_log = summary_patch == patch.end() || !summary_patch->contains("toolCallLog");
  if (!keep_log) return MergeNamedParts(patch, false);
  // The patch leaves the tool-call log alone. The log is the largest part of the summary and was
  // decoded, redacted, cut and validated when it arrived, so it is moved aside rather than
  // copied, checked again and compared: the parts are merged without it, and it goes back into
  // the context afterwards, whether the change was committed or not.
  struct LogAside {
    std::vector<ToolCallEntry>* home;
    std::vector<ToolCallEntry> log;
    ~LogAside() { *home = std::move(log); }
  } aside{&content_.summary.tool_call_log, std::move(content_.summary.tool_call_log)};
  content_.summary.tool_call_log.clear();
  StatusOr<ContextUpdate> update = MergeNamedParts(patch, true);
  if (update.ok()) update->tool_call_log_size = aside.log.size();
  return update;
}

StatusOr<ContextUpdate> ContextState::MergeNamedParts(const json& patch, bool keep_log) {
  auto summary_patch = patch.find("contextSummary");
  Content next;
  json after = json::object();  // the JSON form of each part the patch names
  try {
    if (summary_patch != patch.end()) {
      // With the log aside, content_'s summary has no tool-call log, and neither has next's.
      if (auto fields = SummaryWithFields(content_.summary, *summary_patch)) {
        // Plain fields set: the same summary the general path decodes, redacted the same way.
        RedactSummaryText(&*fields, &content_.summary);
        next.summary = std::move(*fields);
      } else {
        const json& before = encoded_["contextSummary"];
        json merged = json::object();
        for (const auto& [key, value] : before.items()) {
          if (!keep_log || key != "toolCallLog") merged[key] = value;
        }
        if (keep_log) merged["toolCallLog"] = json::array();
        merged.merge_patch(*summary_patch);
        auto decoded = DecodeSummary(merged, &content_.summary);
        if (!decoded.ok()) return decoded.status();
        next.summary = std::move(decoded).value();
      }
      NormalizeContextSummary(&next.summary);
      if (Status v = ValidateContextSummary(next.summary, "contextSummary"); !v.ok()) return v;
    } else {
      next.summary = content_.summary;
    }
    // An optional part (activeTask, workspace): merged and decoded when the patch names it.
    auto part = [&](const char* key, const auto& current, auto* out, auto decode,
                    auto encode) -> Status {
      auto it = patch.find(key);
      if (it == patch.end()) {
        *out = current;
        return OkStatus();
      }
      json merged = encoded_[key];
      merged.merge_patch(*it);
      auto decoded = decode(merged);
      if (!decoded.ok()) return decoded.status();
      *out = std::move(decoded).value();
      after[key] = out->has_value() ? encode(**out) : json();
      return OkStatus();
    };
    Status task = part(
        "activeTask", content_.active_task, &next.active_task,
        [this](const json& j) { return DecodeTask(j); }, ActiveTaskToJsonValue);
    if (!task.ok()) return task;
    Status ws = part("workspace", content_.workspace, &next.workspace, DecodeWorkspace,
                     WorkspaceToJsonValue);
    if (!ws.ok()) return ws;
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("document: cannot apply merge patch: ") + e.what());
  }
  if (summary_patch != patch.end()) {
    after["contextSummary"] = ContextSummaryToJsonValue(next.summary);  // without the log if aside
  }
  // The journal records the effect (after redaction and cutting) of the parts the patch names.
  auto effect = [&](const Content&) {
    json p = json::object();
    for (const auto& [key, value] : after.items()) {
      const json& before = encoded_[key];
      if (key == "contextSummary" && keep_log) {
        // MakeMergePatch of the two summaries without their logs, member by member (no copies).
        json d = json::object();
        for (const auto& [k, v] : before.items()) {
          if (k != "toolCallLog" && !value.contains(k)) d[k] = nullptr;
        }
        for (const auto& [k, v] : value.items()) {
          if (k == "toolCallLog") continue;
          auto it = before.find(k);
          if (it == before.end()) {
            d[k] = v;
          } else if (*it != v) {
            d[k] = MakeMergePatch(*it, v);
          }
        }
        if (!d.empty()) p[key] = std::move(d);
      } else if (before != value) {
        p[key] = MakeMergePatch(before, value);
      }
    }
    return p;
  };
  auto encoded = [&](const Content&, json* e) {
    for (auto& [key, value] : after.items()) {
      if (key == "contextSummary" && keep_log) {
        json log = std::move((*e)[key]["toolCallLog"]);
        (*e)[key] = std::move(value);
        (*e)[key]["toolCallLog"] = std::move(log);
      } else {
        (*e)[key] = std::move(value);
      }
    }
  };
  return Commit(std::move(next), JournalKind::kContextPatch, effect, encoded);
}

StatusOr<ContextUpdate> ContextState::AppendToolCall(const json& entry) {
  auto e = ToolCallEntryFromJsonValue(entry, "");
  if (!e.ok()) return e.status();
  RedactToolCall(&*e);
  ToolCallEntry added = NormalizeToolCallEntry(std::move(e).value());
  // The schema's rules are per entry, and the rest of the summary was checked when it was set.
  RETURN_IF_ERROR(ValidateToolCallEntry(added, ""));
  // A tool call only appends to the log (dropping its oldest entry when it is full), and the
  // journal records the entry alone. So the context is changed in place once the entry is
  // durable, instead of through a copy of the whole context (Commit): a journal that refuses
  // the entry leaves everything as it was.
  std::lock_guard<std::mutex> lock(mu_);
  if (frozen_) return ShuttingDown();
  auto& log = content_.summary.tool_call_log;
  ContextUpdate u;
  // Unchanged only when the full log holds nothing but this very entry.
  const bool same = log.size() >= limits::kToolCallLogEntries &&
                    std::all_of(log.begin(), log.end(),
                                [&added](const ToolCallEntry& old) { return old == added; });
  json added_json = same ? json() : ToolCallEntryToJsonValue(added);
  if (journal_) {
    std::string text = same ? std::string() : DumpJsonValue(added_json);
    ASSIGN_OR_RETURN(journal_position_, journal_(JournalKind::kToolCall, text));
  }
  u.journal_sequence = journal_position_.sequence;
  if (!same) {
    log.push_back(std::move(added));
    json& encoded_log = encoded_["contextSummary"]["toolCallLog"];
    encoded_log.push_back(std::move(added_json));
    if (log.size() > limits::kToolCallLogEntries) {
      log.erase(log.begin(), log.end() - limits::kToolCallLogEntries);
      encoded_log.erase(encoded_log.begin(), encoded_log.end() - limits::kToolCallLogEntries);
    }
    u.changed = true;
    ++revision_;
  }
  u.revision = revision_;
  u.tool_call_log_size = log.size();
  return u;
}

void ContextState::Seed(const Checkpoint& cp) {
  std::lock_guard<std::mutex> lock(mu_);
  content_.active_task = cp.active_task;
  content_.summary = cp.context_summary;
  content_.workspace = cp.workspace;
  encoded_ = Encode(content_);
  ledger_ = LedgerState(cp.ledger.value_or(Ledger{}));
  ledger_.MarkOpenOutcomeUnknown();
  if (cp.journal) journal_position_ = *cp.journal;
  gates_.clear();
  if (!cp.gates.empty()) {
    // The checkpoint was verified (sealed and validated) before it got here; a gates array that
    // still does not parse is left out rather than guessed.
    auto parsed = GatesFromJson(json::parse(cp.gates, nullptr, /*allow_exceptions=*/false));
    if (parsed.ok()) gates_ = std::move(parsed).value();
  }
  gate_cv_.notify_all();
}

ContextSnapshot ContextState::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  ContextSnapshot s;
  s.active_task = content_.active_task;
  s.summary = content_.summary;
  s.workspace = content_.workspace;
  s.revision = revision_;
  s.journal = journal_position_;
  s.ledger = ledger_.ledger();
  s.gates = gates_;
  return s;
}

json ContextState::ToJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  return encoded_;
}

}  // namespace agentckpt
