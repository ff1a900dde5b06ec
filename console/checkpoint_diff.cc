#include "console/checkpoint_diff.h"

#include <algorithm>
#include <map>
#include <set>

#include "checkpoint/checkpoint_json.h"
#include "checkpoint/ledger_json.h"
#include "common/time_format.h"

namespace agentckpt {
namespace {

using nlohmann::json;

constexpr size_t kMaxDiffLines = 2000;

std::vector<std::string> SplitLines(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  for (;;) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos) {
      out.push_back(s.substr(start));
      break;
    }
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

json Side(const Checkpoint& cp) {
  return {{"sequenceNumber", cp.sequence_number},
          {"checkpointId", cp.checkpoint_id},
          {"timestamp", FormatRfc3339Millis(cp.timestamp_ms)},
          {"triggerReason", std::string(TriggerReasonName(cp.trigger_reason))}};
}

json TaskField(const Checkpoint& cp, const char* what) {
  if (!cp.active_task) return nullptr;
  const ActiveTask& t = *cp.active_task;
  std::string w = what;
  if (w == "phase") return std::string(TaskPhaseName(t.phase));
  if (w == "progress") return t.progress;
  if (w == "taskId") return t.task_id;
  return t.title;
}

json Change(const json& a, const json& b) { return {{"from", a}, {"to", b}, {"changed", a != b}}; }

// Items of `b` not matched by an equal item of `a` (multiset difference, order of `b` kept).
template <typename T>
std::vector<T> Added(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<bool> used(a.size(), false);
  std::vector<T> out;
  for (const T& x : b) {
    bool found = false;
    for (size_t i = 0; i < a.size() && !found; ++i) {
      if (!used[i] && a[i] == x) used[i] = found = true;
    }
    if (!found) out.push_back(x);
  }
  return out;
}

std::vector<LedgerCall> LedgerCalls(const Checkpoint& cp) {
  std::vector<LedgerCall> out;
  if (!cp.ledger) return out;
  out = cp.ledger->open;
  out.insert(out.end(), cp.ledger->completed.begin(), cp.ledger->completed.end());
  return out;
}

json LedgerChanges(const Checkpoint& from, const Checkpoint& to) {
  std::map<std::string, LedgerCall> before;
  for (const LedgerCall& c : LedgerCalls(from)) before[c.call_id] = c;
  json added = json::array(), changed = json::array();
  for (const LedgerCall& c : LedgerCalls(to)) {
    auto it = before.find(c.call_id);
    if (it == before.end()) {
      added.push_back(LedgerCallToJsonValue(c));
    } else if (it->second.state != c.state) {
      changed.push_back({{"callId", c.call_id},
                         {"toolName", c.tool_name},
                         {"from", std::string(LedgerCallStateName(it->second.state))},
                         {"to", std::string(LedgerCallStateName(c.state))}});
    }
  }
  return {{"added", added}, {"stateChanged", changed}};
}

json AckedChange(const Checkpoint& from, const Checkpoint& to) {
  json a = from.nats_position ? json(from.nats_position->last_acked_sequence) : json(nullptr);
  json b = to.nats_position ? json(to.nats_position->last_acked_sequence) : json(nullptr);
  json out = Change(a, b);
  if (a.is_number() && b.is_number()) {
    out["delta"] = static_cast<int64_t>(b.get<uint64_t>()) - static_cast<int64_t>(a.get<uint64_t>());
  }
  return out;
}

}  // namespace

std::vector<DiffLine> DiffLines(const std::string& before, const std::string& after) {
  std::vector<std::string> a = SplitLines(before), b = SplitLines(after);
  std::vector<DiffLine> out;
  if (a.size() > kMaxDiffLines || b.size() > kMaxDiffLines) {
    for (auto& l : a) out.push_back({'-', l});
    for (auto& l : b) out.push_back({'+', l});
    return out;
  }
  // lcs[i][j]: the LCS length of a[i..] and b[j..].
  std::vector<std::vector<uint16_t>> lcs(a.size() + 1, std::vector<uint16_t>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? static_cast<uint16_t>(lcs[i + 1][j + 1] + 1)
                               : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) {
      out.push_back({' ', a[i]});
      ++i, ++j;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      out.push_back({'-', a[i++]});
    } else {
      out.push_back({'+', b[j++]});
    }
  }
  for (; i < a.size(); ++i) out.push_back({'-', a[i]});
  for (; j < b.size(); ++j) out.push_back({'+', b[j]});
  return out;
}

json DiffCheckpoints(const Checkpoint& from, const Checkpoint& to) {
  const ContextSummary& a = from.context_summary;
  const ContextSummary& b = to.context_summary;
  json plan_added = Added(a.plan_outline, b.plan_outline);
  json plan_removed = Added(b.plan_outline, a.plan_outline);
  json calls = json::array();
  for (const ToolCallEntry& e : Added(a.tool_call_log, b.tool_call_log)) {
    calls.push_back(ToolCallEntryToJsonValue(e));
  }
  json draft = json::array();
  int added = 0, removed = 0;
  for (const DiffLine& l : DiffLines(a.draft_content, b.draft_content)) {
    draft.push_back({{"op", std::string(1, l.op)}, {"text", l.text}});
    added += l.op == '+';
    removed += l.op == '-';
  }
  return {
      {"agentId", to.agent_id},
      {"from", Side(from)},
      {"to", Side(to)},
      {"task",
       {{"taskId", Change(TaskField(from, "taskId"), TaskField(to, "taskId"))},
        {"title", Change(TaskField(from, "title"), TaskField(to, "title"))},
        {"phase", Change(TaskField(from, "phase"), TaskField(to, "phase"))},
        {"progress", Change(TaskField(from, "progress"), TaskField(to, "progress"))}}},
      {"completedSteps", Change(a.completed_steps, b.completed_steps)},
      {"plan", {{"added", plan_added}, {"removed", plan_removed}}},
      {"toolCalls", {{"added", calls}}},
      {"ledger", LedgerChanges(from, to)},
      {"draft",
       {{"changed", a.draft_content != b.draft_content},
        {"linesAdded", added},
        {"linesRemoved", removed},
        {"lines", draft}}},
      {"lastAckedSequence", AckedChange(from, to)},
  };
}

}  // namespace agentckpt
