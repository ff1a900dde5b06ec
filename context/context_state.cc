#include "context/context_state.h"

#include <utility>

#include "checkpoint/checkpoint_json.h"
#include "checkpoint/limits.h"
#include "common/status_macros.h"
#include "journal/journal_fold.h"

namespace agentckpt {

using nlohmann::json;

void ContextState::RedactToolCall(ToolCallEntry* entry) const {
  if (redactor_ == nullptr) return;
  redactor_->RedactInPlace(&entry->input_summary);
  redactor_->RedactInPlace(&entry->output_summary);
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
  auto cs = ContextSummaryFromJsonValue(*summary, "contextSummary");
  if (!cs.ok()) return cs.status();
  c.summary = std::move(cs).value();
  if (redactor_ != nullptr) {  // before the summaries are cut, so no secret is cut in half
    redactor_->RedactInPlace(&c.summary.gathering_results);
    for (std::string& step : c.summary.plan_outline) redactor_->RedactInPlace(&step);
    redactor_->RedactInPlace(&c.summary.draft_content);
    for (ToolCallEntry& e : c.summary.tool_call_log) RedactToolCall(&e);
  }
  NormalizeContextSummary(&c.summary);
  RETURN_IF_ERROR(ValidateContextSummary(c.summary, "contextSummary"));
  auto task = body.find("activeTask");
  if (task != body.end() && !task->is_null()) {
    auto t = ActiveTaskFromJsonValue(*task, "activeTask");
    if (!t.ok()) return t.status();
    if (redactor_ != nullptr) redactor_->RedactInPlace(&t->title);
    RETURN_IF_ERROR(ValidateActiveTask(*t, "activeTask"));
    c.active_task = std::move(t).value();
  }
  auto ws = body.find("workspace");
  if (ws != body.end() && !ws->is_null()) {
    auto w = WorkspaceFromJsonValue(*ws, "workspace");
    if (!w.ok()) return w.status();
    RETURN_IF_ERROR(ValidateWorkspace(*w, "workspace"));
    c.workspace = std::move(w).value();
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

StatusOr<ContextUpdate> ContextState::Commit(Content next, JournalKind kind,
                                             const std::function<json(const Content&)>& payload) {
  ContextUpdate u;
  const bool same = next == content_;
  if (journal_) {
    std::string text =
        same ? std::string() : payload(next).dump(-1, ' ', false, json::error_handler_t::replace);
    ASSIGN_OR_RETURN(journal_position_, journal_(kind, text));
  }
  u.journal_sequence = journal_position_.sequence;
  if (same) {
    u.revision = revision_;
    return u;
  }
  const auto& before = content_.active_task;
  const auto& after = next.active_task;
  u.phase_changed = after.has_value() && (!before.has_value() || before->phase != after->phase ||
                                          before->task_id != after->task_id);
  u.changed = true;
  content_ = std::move(next);
  u.revision = ++revision_;
  return u;
}

StatusOr<ContextUpdate> ContextState::Replace(const json& body) {
  ASSIGN_OR_RETURN(Content next, Decode(body));
  std::lock_guard<std::mutex> lock(mu_);
  if (frozen_) return ShuttingDown();
  return Commit(std::move(next), JournalKind::kContextPut,
                [](const Content& c) { return Encode(c); });
}

StatusOr<ContextUpdate> ContextState::MergePatch(const json& patch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (frozen_) return ShuttingDown();
  json doc = Encode(content_);
  json before = doc;
  try {
    doc.merge_patch(patch);
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("document: cannot apply merge patch: ") + e.what());
  }
  ASSIGN_OR_RETURN(Content next, Decode(doc));
  // The journal records the effect (after redaction and cutting), not the request.
  return Commit(std::move(next), JournalKind::kContextPatch,
                [&before](const Content& c) { return MakeMergePatch(before, Encode(c)); });
}

StatusOr<ContextUpdate> ContextState::AppendToolCall(const json& entry) {
  auto e = ToolCallEntryFromJsonValue(entry, "");
  if (!e.ok()) return e.status();
  RedactToolCall(&*e);
  ToolCallEntry normalized = NormalizeToolCallEntry(std::move(e).value());
  std::lock_guard<std::mutex> lock(mu_);
  if (frozen_) return ShuttingDown();
  Content next = content_;
  auto& log = next.summary.tool_call_log;
  log.push_back(std::move(normalized));
  if (log.size() > limits::kToolCallLogEntries) {
    log.erase(log.begin(), log.end() - limits::kToolCallLogEntries);
  }
  Status valid = ValidateContextSummary(next.summary, "");
  if (!valid.ok()) {
    // Only the new entry can be at fault: report its fields without the log position.
    std::string msg = valid.message();
    size_t colon = msg.find(": ");
    size_t dot = msg.find("].");
    if (dot != std::string::npos && dot < colon) msg = msg.substr(dot + 2);
    return InvalidArgumentError(msg);
  }
  return Commit(std::move(next), JournalKind::kToolCall, [](const Content& c) {
    return ToolCallEntryToJsonValue(c.summary.tool_call_log.back());
  });
}

void ContextState::Seed(const Checkpoint& cp) {
  std::lock_guard<std::mutex> lock(mu_);
  content_.active_task = cp.active_task;
  content_.summary = cp.context_summary;
  content_.workspace = cp.workspace;
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
  s.gates = gates_;
  return s;
}

json ContextState::ToJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Encode(content_);
}

}  // namespace agentckpt
