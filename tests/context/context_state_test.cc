#include "context/context_state.h"

#include <gtest/gtest.h>

#include "checkpoint/checkpoint_json.h"
#include "checkpoint/limits.h"
#include "common/utf8.h"
#include "journal/journal_fold.h"
#include "redact/redactor.h"
#include "tests/sidecar/sidecar_process.h"

namespace agentckpt {
namespace {

using nlohmann::json;

json FixtureBody() { return json::parse(testing::FixtureContextBody("checkpoint-16k.json")); }

json ToolCall(const std::string& name, const std::string& input = "in") {
  return {{"toolName", name},      {"timestamp", "2026-11-03T02:40:00.000Z"},
          {"inputSummary", input}, {"outputSummary", "out"},
          {"durationMs", 12},      {"success", true}};
}

TEST(SidecarContextStateTest, PutReplacesAndCountsRevisions) {
  ContextState state;
  EXPECT_EQ(state.Snapshot().revision, 0u);
  auto u = state.Replace(FixtureBody());
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_TRUE(u->changed);
  EXPECT_TRUE(u->phase_changed);  // a task appeared
  EXPECT_EQ(u->revision, 1u);
  ContextSnapshot s = state.Snapshot();
  ASSERT_TRUE(s.active_task.has_value());
  EXPECT_EQ(s.active_task->task_id, "task-4521");
  EXPECT_EQ(s.active_task->phase, TaskPhase::kExecuting);
  // The same content again is not a change.
  auto again = state.Replace(FixtureBody());
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed);
  EXPECT_FALSE(again->phase_changed);
  EXPECT_EQ(again->revision, 1u);
}

TEST(SidecarContextStateTest, MergePatchFollowsRfc7386) {
  ContextState state;
  ASSERT_TRUE(state.Replace(FixtureBody()).ok());
  auto progress = state.MergePatch({{"activeTask", {{"progress", 70}}}});
  ASSERT_TRUE(progress.ok()) << progress.status().ToString();
  EXPECT_TRUE(progress->changed);
  EXPECT_FALSE(progress->phase_changed);
  EXPECT_EQ(state.Snapshot().active_task->progress, 70);
  EXPECT_EQ(state.Snapshot().active_task->title, "Blog post: NATS dead letter queues");

  auto phase = state.MergePatch({{"activeTask", {{"phase", "reviewing"}}}});
  ASSERT_TRUE(phase.ok());
  EXPECT_TRUE(phase->phase_changed);

  auto plan = state.MergePatch({{"contextSummary", {{"planOutline", {"one", "two"}}}}});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(state.Snapshot().summary.plan_outline, (std::vector<std::string>{"one", "two"}));

  // null removes a member: no active task any more (not a phase change).
  auto removed = state.MergePatch({{"activeTask", nullptr}});
  ASSERT_TRUE(removed.ok());
  EXPECT_FALSE(removed->phase_changed);
  EXPECT_FALSE(state.Snapshot().active_task.has_value());
}

TEST(SidecarContextStateTest, RejectedRequestsLeaveTheContextExactlyAsItWas) {
  ContextState state;
  ASSERT_TRUE(state.Replace(FixtureBody()).ok());
  const json before = state.ToJson();
  const uint64_t revision = state.Snapshot().revision;

  json no_summary = FixtureBody();
  no_summary.erase("contextSummary");
  json bad_phase = FixtureBody();
  bad_phase["activeTask"]["phase"] = "sleeping";
  json unknown = FixtureBody();
  unknown["extra"] = 1;
  json bad_type = FixtureBody();
  bad_type["contextSummary"]["completedSteps"] = "many";
  json bad_log = FixtureBody();
  bad_log["contextSummary"]["toolCallLog"][0]["durationMs"] = -5;

  struct Case {
    json body;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{{json::array(), "document"},
                                         {no_summary, "contextSummary"},
                                         {bad_phase, "activeTask.phase"},
                                         {unknown, "extra"},
                                         {bad_type, "contextSummary.completedSteps"},
                                         {bad_log, "contextSummary.toolCallLog[0].durationMs"}}) {
    auto u = state.Replace(c.body);
    ASSERT_FALSE(u.ok());
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(u.status().message().rfind(c.field + ": ", 0), 0u) << u.status().message();
    EXPECT_EQ(state.ToJson(), before);
  }
  for (const json& patch :
       {json{{"activeTask", {{"progress", 101}}}}, json{{"contextSummary", {{"draftContent", 5}}}},
        json{{"contextSummary", nullptr}}, json{{"bogus", true}}, json("not an object")}) {
    auto u = state.MergePatch(patch);
    ASSERT_FALSE(u.ok()) << patch.dump();
    EXPECT_EQ(state.ToJson(), before);
  }
  json bad_duration = ToolCall("t");
  bad_duration["durationMs"] = "x";
  for (const json& entry : {json::object(), json{{"toolName", 1}}, bad_duration}) {
    ASSERT_FALSE(state.AppendToolCall(entry).ok()) << entry.dump();
    EXPECT_EQ(state.ToJson(), before);
  }
  EXPECT_EQ(state.Snapshot().revision, revision);
}

TEST(SidecarContextStateTest, ToolCallsAreCutAndTheNewest50Kept) {
  ContextState state;
  ASSERT_TRUE(state.Replace(FixtureBody()).ok());
  std::string long_input;
  for (int i = 0; i < 150; ++i) long_input += "é";  // 2 bytes each
  long_input += std::string(100, 'x');
  for (int i = 0; i < 60; ++i) {
    auto u = state.AppendToolCall(ToolCall("tool-" + std::to_string(i), long_input));
    ASSERT_TRUE(u.ok()) << u.status().ToString();
  }
  const auto& log = state.Snapshot().summary.tool_call_log;
  ASSERT_EQ(log.size(), 50u);
  EXPECT_EQ(log.front().tool_name, "tool-10");
  EXPECT_EQ(log.back().tool_name, "tool-59");
  EXPECT_EQ(Utf8Length(log.back().input_summary), 200u);
  EXPECT_TRUE(IsValidUtf8(log.back().input_summary));
}

TEST(SidecarContextStateTest, SeedDoesNotCountAsAChange) {
  ContextState state;
  Checkpoint cp;
  cp.active_task = ActiveTask{"t", "title", TaskPhase::kPlanning, 10, 0};
  cp.context_summary.draft_content = "draft";
  state.Seed(cp);
  EXPECT_EQ(state.Snapshot().revision, 0u);
  EXPECT_EQ(state.Snapshot().summary.draft_content, "draft");
  // Moving to another phase from the seeded one is a phase change.
  auto u = state.MergePatch({{"activeTask", {{"phase", "executing"}}}});
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_TRUE(u->phase_changed);
}

TEST(SidecarContextStateTest, FreezeStopsIntake) {
  ContextState state;
  ASSERT_TRUE(state.Replace(FixtureBody()).ok());
  const json before = state.ToJson();
  state.Freeze();
  EXPECT_EQ(state.Replace(FixtureBody()).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(state.MergePatch({{"activeTask", {{"progress", 1}}}}).status().code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(state.AppendToolCall(ToolCall("t")).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(state.ToJson(), before);
}

}  // namespace
}  // namespace agentckpt

namespace agentckpt {
namespace {

// The JSON form of a snapshot, built apart from ContextState's own (cached) form.
json JsonOf(const ContextSnapshot& s) {
  return {{"activeTask", s.active_task ? ActiveTaskToJsonValue(*s.active_task) : json()},
          {"contextSummary", ContextSummaryToJsonValue(s.summary)},
          {"workspace", s.workspace ? WorkspaceToJsonValue(*s.workspace) : json()}};
}

// A PATCH decodes only the parts it names; the result, the cached JSON form and the journal's
// effect must equal what decoding the whole patched document gives (Replace, on a second state).
TEST(SidecarContextStateTest, MergePatchEqualsReplacingTheWholePatchedDocument) {
  Redactor redactor;
  ContextState state;
  state.set_redactor(&redactor);
  std::string effect;
  state.set_journal([&effect](JournalKind, const std::string& payload) {
    effect = payload;
    return StatusOr<JournalPosition>(JournalPosition{0, kJournalGenesisSha256});
  });
  ASSERT_TRUE(state.Replace(FixtureBody()).ok());
  const std::string secret = " token=ghp_16C7e42F292c6912E7710c838347Ae178B4a";
  const std::vector<json> patches = {
      {{"contextSummary", {{"completedSteps", 9}, {"draftContent", "new draft" + secret}}}},
      {{"contextSummary", {{"planOutline", {"a" + secret, "b"}}, {"gatheringResults", "g"}}}},
      {{"contextSummary", {{"draftContent", std::string(200000, 'x')}}}},  // cut to the limit
      {{"contextSummary", {{"toolCallLog", {ToolCall("one", "x" + secret)}}}}},
      {{"contextSummary", {{"systemPromptHash", nullptr}}}},
      {{"activeTask", {{"progress", 55}, {"title", "t" + secret}}}, {"unused", nullptr}},
      {{"workspace",
        {{"modifiedFiles", {"a.txt"}},
         {"uncommittedChanges", true},
         {"lastCommitHash", std::string(40, 'a')},
         {"branchName", "main"}}}},
      {{"workspace", {{"branchName", "dev"}}}},
      {{"workspace", nullptr}, {"contextSummary", {{"completedSteps", 10}}}},
      {{"activeTask", nullptr}},
      {{"activeTask", {{"taskId", "t2"}, {"title", "new"}, {"phase", "planning"}}}},
      {{"contextSummary", json::object()}},
      json::object(),
      // Plain field assignments (applied without decoding the whole summary), and their edges.
      {{"contextSummary",
        {{"systemPromptHash", std::string(64, 'c')},
         {"gatheringResults", "found" + secret},
         {"completedSteps", json(uint64_t{9223372036854775807u})}}}},
      {{"contextSummary", {{"completedSteps", 0}, {"draftContent", ""}}}},
      {{"contextSummary", {{"draftContent", "caf\u00e9 \u2603 \U0001F600"}}}},
      {{"contextSummary", {{"draftContent", "caf\u00e9 \u2603 \U0001F600"}}}},  // no change
      {{"contextSummary", {{"planOutline", json::array()}}}},
      {{"contextSummary", {{"planOutline", {"b", "a" + secret, "c"}}}}},
      {{"contextSummary", {{"planOutline", std::vector<std::string>(500, "step")}}}},  // cut
      {{"contextSummary", {{"gatheringResults", std::string(300000, 'g')}}}},          // cut
      {{"contextSummary", {{"draftContent", "d"}, {"planOutline", nullptr}}}},         // removes
      {{"contextSummary", {{"planOutline", {"x"}}, {"toolCallLog", json::array()}}}},
  };
  for (const json& patch : patches) {
    const json before = state.ToJson();
    json whole = before;
    whole.merge_patch(patch);
    ContextState reference;
    reference.set_redactor(&redactor);
    auto expected = reference.Replace(whole);
    effect = "-";
    auto u = state.MergePatch(patch);
    ASSERT_EQ(u.ok(), expected.ok()) << patch.dump().substr(0, 200) << ": " << u.status().ToString()
                                     << " / " << expected.status().ToString();
    if (!u.ok()) continue;
    EXPECT_TRUE(state.ToJson() == reference.ToJson()) << patch.dump().substr(0, 200);
    EXPECT_TRUE(state.ToJson() == JsonOf(state.Snapshot())) << patch.dump().substr(0, 200);
    // Folding the journal's effect into the previous form gives the new form.
    if (u->changed) {
      json folded = before;
      JournalEntry entry;
      entry.kind = JournalKind::kContextPatch;
      entry.payload = effect;
      ASSERT_TRUE(ApplyJournalEntry(entry, &folded).ok());
      EXPECT_TRUE(folded == state.ToJson())
          << patch.dump().substr(0, 200) << "\neffect " << effect.substr(0, 300);
    } else {
      EXPECT_EQ(effect, "") << patch.dump().substr(0, 200);
    }
  }
  // Errors name the same field as the whole-document path.
  for (const json& patch :
       {json{{"contextSummary", {{"toolCallLog", {{{"toolName", 1}}}}}}},
        json{{"workspace", {{"branchName", 5}}}}, json{{"activeTask", {{"phase", "sleeping"}}}},
        json{{"contextSummary", {{"completedSteps", -1}}}},
        json{{"contextSummary", {{"completedSteps", 1.5}}}},
        json{{"contextSummary", {{"completedSteps", json(uint64_t{9223372036854775808u})}}}},
        json{{"contextSummary", {{"completedSteps", "7"}}}},
        json{{"contextSummary", {{"draftContent", 7}}}},
        json{{"contextSummary", {{"planOutline", {"a", 1}}}}},
        json{{"contextSummary", {{"planOutline", "a"}}}},
        json{{"contextSummary", {{"draftContent", nullptr}}}},
        json{{"contextSummary", {{"draftContent", "x"}, {"unknownField", "y"}}}},
        json{{"contextSummary", {{"systemPromptHash", "not-a-hash"}}}}}) {
    json whole = state.ToJson();
    whole.merge_patch(patch);
    ContextState reference;
    auto expected = reference.Replace(whole);
    auto u = state.MergePatch(patch);
    ASSERT_FALSE(u.ok());
    ASSERT_FALSE(expected.ok());
    EXPECT_EQ(u.status().message(), expected.status().message());
    EXPECT_TRUE(state.ToJson() == JsonOf(state.Snapshot())) << patch.dump().substr(0, 200);
  }
}

// A patch that leaves the tool-call log alone merges without it (the log is moved aside and put
// back): the log stays whole whether the change is committed, refused or fails in the journal,
// and the reply counts it.
TEST(SidecarContextStateTest, APatchKeepsTheToolCallLogWhateverHappens) {
  ContextState state;
  bool journal_fails = false;
  state.set_journal([&journal_fails](JournalKind, const std::string&) {
    if (journal_fails) return StatusOr<JournalPosition>(UnavailableError("store down"));
    return StatusOr<JournalPosition>(JournalPosition{0, kJournalGenesisSha256});
  });
  ASSERT_TRUE(state.Replace(FixtureBody()).ok());
  const std::vector<ToolCallEntry> log = state.Snapshot().summary.tool_call_log;
  ASSERT_FALSE(log.empty());
  auto done = state.MergePatch({{"contextSummary", {{"draftContent", "next"}}}});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->tool_call_log_size, log.size());
  EXPECT_EQ(state.Snapshot().summary.tool_call_log, log);
  auto task_only = state.MergePatch({{"activeTask", {{"progress", 12}}}});
  ASSERT_TRUE(task_only.ok()) << task_only.status().ToString();
  EXPECT_EQ(task_only->tool_call_log_size, log.size());
  EXPECT_EQ(state.Snapshot().summary.tool_call_log, log);
  EXPECT_FALSE(state.MergePatch({{"contextSummary", {{"draftContent", 7}}}}).ok());
  EXPECT_EQ(state.Snapshot().summary.tool_call_log, log);
  journal_fails = true;
  auto failed = state.MergePatch({{"contextSummary", {{"draftContent", "lost"}}}});
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(state.Snapshot().summary.tool_call_log, log);
  EXPECT_EQ(state.Snapshot().summary.draft_content, "next");
  EXPECT_TRUE(state.ToJson() == JsonOf(state.Snapshot()));
  journal_fails = false;
  ASSERT_TRUE(state.AppendToolCall(ToolCall("after")).ok());
  EXPECT_EQ(state.Snapshot().summary.tool_call_log.size(),
            std::min(log.size() + 1, limits::kToolCallLogEntries));
}

// A tool call is applied in place (not through a copy of the context): the result equals
// replacing the whole document with the entry appended to its log (redacted, cut, the newest 50
// kept), the journal's effect folds the previous form into the new one, and a journal that
// refuses the entry leaves everything as it was.
TEST(SidecarContextStateTest, AToolCallEqualsAppendingToTheWholeDocument) {
  Redactor redactor;
  ContextState state;
  state.set_redactor(&redactor);
  std::string effect;
  JournalKind effect_kind = JournalKind::kContextPut;
  bool journal_fails = false;
  state.set_journal([&](JournalKind kind, const std::string& payload) {
    if (journal_fails) return StatusOr<JournalPosition>(UnavailableError("store down"));
    effect_kind = kind;
    effect = payload;
    return StatusOr<JournalPosition>(JournalPosition{0, kJournalGenesisSha256});
  });
  ASSERT_TRUE(state.Replace(FixtureBody()).ok());
  const std::string secret = " token=ghp_16C7e42F292c6912E7710c838347Ae178B4a";
  std::vector<json> calls;
  for (int i = 0; i < 55; ++i) {
    json call = ToolCall("tool-" + std::to_string(i), "in " + std::to_string(i) + secret);
    if (i % 7 == 3) call["outputSummary"] = std::string(5000, 'o') + secret;  // cut
    calls.push_back(call);
  }
  // A full log of one entry repeated, then that entry again: the content does not change.
  for (int i = 0; i < 52; ++i) calls.push_back(ToolCall("same", "same input"));
  for (size_t n = 0; n < calls.size(); ++n) {
    const json before = state.ToJson();
    const uint64_t revision = state.Snapshot().revision;
    json whole = before;
    json& log = whole["contextSummary"]["toolCallLog"];
    log.push_back(calls[n]);
    if (log.size() > limits::kToolCallLogEntries) {
      log.erase(log.begin(), log.end() - limits::kToolCallLogEntries);
    }
    ContextState reference;
    reference.set_redactor(&redactor);
    ASSERT_TRUE(reference.Replace(whole).ok()) << n;
    if (n % 10 == 5) {  // refused by the journal: nothing changes
      journal_fails = true;
      EXPECT_EQ(state.AppendToolCall(calls[n]).status().code(), StatusCode::kUnavailable) << n;
      journal_fails = false;
      EXPECT_TRUE(state.ToJson() == before) << n;
      EXPECT_EQ(state.Snapshot().revision, revision) << n;
    }
    effect = "-";
    auto u = state.AppendToolCall(calls[n]);
    ASSERT_TRUE(u.ok()) << n << ": " << u.status().ToString();
    EXPECT_EQ(effect_kind, JournalKind::kToolCall) << n;
    EXPECT_TRUE(state.ToJson() == reference.ToJson()) << n;
    EXPECT_TRUE(state.ToJson() == JsonOf(state.Snapshot())) << n;
    EXPECT_EQ(u->tool_call_log_size, state.Snapshot().summary.tool_call_log.size()) << n;
    EXPECT_EQ(u->changed, state.ToJson() != before) << n;
    EXPECT_EQ(u->revision, revision + (u->changed ? 1 : 0)) << n;
    if (u->changed) {
      json folded = before;
      JournalEntry entry;
      entry.kind = JournalKind::kToolCall;
      entry.payload = effect;
      ASSERT_TRUE(ApplyJournalEntry(entry, &folded).ok()) << n;
      EXPECT_TRUE(folded == state.ToJson()) << n;
    } else {
      EXPECT_EQ(effect, "") << n;
    }
  }
  EXPECT_FALSE(state.AppendToolCall(ToolCall("same", "same input"))->changed);
  // An entry at fault is named by its field alone.
  const std::string message = state.AppendToolCall(ToolCall("")).status().message();
  EXPECT_EQ(message.rfind("toolName: ", 0), 0u) << message;
}

}  // namespace
}  // namespace agentckpt
