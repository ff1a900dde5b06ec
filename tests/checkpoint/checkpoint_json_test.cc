#include "checkpoint/checkpoint_json.h"

#include <gtest/gtest.h>

#include "tests/support/fixtures.h"

namespace agentckpt {
namespace {

using nlohmann::json;
using testing::ReadSharedFixture;

json Fixture() { return json::parse(ReadSharedFixture("checkpoint-16k.json")); }

std::string ErrorOf(const json& j) {
  auto cp = CheckpointFromJsonValue(j);
  return cp.ok() ? std::string("OK") : cp.status().ToString();
}

TEST(CheckpointJsonTest, DecodesReferenceFixtures) {
  for (const char* name : {"checkpoint-16k.json", "checkpoint-max.json"}) {
    auto cp = CheckpointFromJson(ReadSharedFixture(name));
    ASSERT_TRUE(cp.ok()) << name << ": " << cp.status().ToString();
    EXPECT_EQ(cp->agent_id, "agent-marketing-prod");
    EXPECT_EQ(cp->sequence_number, 1847);
    ASSERT_TRUE(cp->active_task.has_value());
    EXPECT_EQ(cp->active_task->phase, TaskPhase::kExecuting);
    EXPECT_EQ(cp->active_task->progress, 58);
    EXPECT_EQ(cp->context_summary.tool_call_log.size(), 50u);
    EXPECT_EQ(cp->nats_position->last_acked_sequence, 918273u);
    EXPECT_EQ(cp->workspace->branch_name, "post/nats-dlq");
    EXPECT_EQ(cp->trigger_reason, TriggerReason::kPeriodic);
  }
}

TEST(CheckpointJsonTest, RoundTripKeepsEveryFieldAndName) {
  json original = Fixture();
  auto cp = CheckpointFromJsonValue(original);
  ASSERT_TRUE(cp.ok());
  json encoded = CheckpointToJsonValue(*cp, true);
  // The fixture has no expireAt/contentSha256; everything else must come back identical.
  encoded.erase("expireAt");
  EXPECT_EQ(encoded, original);
  auto again = CheckpointFromJson(CheckpointToJson(*cp));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *cp);
}

TEST(CheckpointJsonTest, NullableParts) {
  json j = Fixture();
  j["activeTask"] = nullptr;
  j["natsPosition"] = nullptr;
  j["workspace"] = nullptr;
  auto cp = CheckpointFromJsonValue(j);
  ASSERT_TRUE(cp.ok()) << cp.status().ToString();
  EXPECT_FALSE(cp->active_task.has_value());
  EXPECT_EQ(CheckpointToJsonValue(*cp, false)["activeTask"], nullptr);
}

TEST(CheckpointJsonTest, ClearErrorsNameTheField) {
  struct Case {
    std::function<void(json&)> mutate;
    const char* expected;
  };
  std::vector<Case> cases = {
      {[](json& j) { j.erase("agentId"); }, "INVALID_ARGUMENT: agentId: missing field"},
      {[](json& j) { j["sequenceNumber"] = "12"; }, "sequenceNumber: expected an integer"},
      {[](json& j) { j["sequenceNumber"] = 0; }, "sequenceNumber: must be between 1"},
      {[](json& j) { j["activeTask"]["phase"] = "dreaming"; }, "activeTask.phase: unknown phase"},
      {[](json& j) { j["activeTask"]["progress"] = 101; }, "activeTask.progress: must be between 0 and 100"},
      {[](json& j) { j["activeTask"]["progress"] = -1; }, "activeTask.progress: must be between 0 and 100"},
      {[](json& j) { j["activeTask"]["progress"] = 5.5; }, "activeTask.progress: expected an integer"},
      {[](json& j) { j["triggerReason"] = "cron"; }, "triggerReason: unknown trigger"},
      {[](json& j) { j["contextSummary"]["toolCallLog"][3]["durationMs"] = "fast"; },
       "contextSummary.toolCallLog[3].durationMs: expected an integer"},
      {[](json& j) { j["contextSummary"]["toolCallLog"][0]["success"] = 1; },
       "contextSummary.toolCallLog[0].success: expected true or false"},
      {[](json& j) { j["contextSummary"]["planOutline"][2] = 7; },
       "contextSummary.planOutline[2]: expected a string"},
      {[](json& j) { j["timestamp"] = "yesterday"; }, "timestamp: not an RFC 3339 timestamp"},
      {[](json& j) { j["natsPosition"]["lastAckedSequence"] = -4; },
       "natsPosition.lastAckedSequence: must not be negative"},
      {[](json& j) { j["workspace"]["colour"] = "blue"; }, "workspace.colour: unknown field"},
      {[](json& j) { j["extra"] = 1; }, "extra: unknown field"},
      {[](json& j) { j["contextSummary"] = json::array(); }, "contextSummary: expected an object"},
      {[](json& j) { j["schemaVersion"] = 3; }, "FAILED_PRECONDITION: schemaVersion"},
  };
  for (const auto& c : cases) {
    json j = Fixture();
    c.mutate(j);
    EXPECT_NE(ErrorOf(j).find(c.expected), std::string::npos)
        << "expected \"" << c.expected << "\", got \"" << ErrorOf(j) << "\"";
  }
  std::string dup = ReadSharedFixture("checkpoint-16k.json");
  dup.insert(1, "\"agentId\":\"x\",");
  EXPECT_NE(CheckpointFromJson(dup).status().message().find("agentId: duplicate field"),
            std::string::npos)
      << CheckpointFromJson(dup).status().ToString();
  EXPECT_NE(CheckpointFromJson("{not json").status().message().find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(CheckpointFromJson("[1]").status().message().find("expected an object"),
            std::string::npos);
}

TEST(CheckpointJsonTest, ValidationCatchesBadIdsAndLengths) {
  auto cp = *CheckpointFromJsonValue(Fixture());
  cp.expire_at_ms = cp.timestamp_ms + 7LL * 86400000;
  EXPECT_TRUE(ValidateCheckpoint(cp).ok()) << ValidateCheckpoint(cp).ToString();
  auto bad = cp;
  bad.checkpoint_id = "cp-a1b2c3";
  EXPECT_NE(ValidateCheckpoint(bad).message().find("checkpointId"), std::string::npos);
  bad = cp;
  bad.agent_id = "agent one";
  EXPECT_NE(ValidateCheckpoint(bad).message().find("agentId"), std::string::npos);
  bad = cp;
  bad.context_summary.system_prompt_hash = "xyz";
  EXPECT_NE(ValidateCheckpoint(bad).message().find("systemPromptHash"), std::string::npos);
  bad = cp;
  bad.context_summary.tool_call_log[0].input_summary = std::string(201, 'x');
  EXPECT_NE(ValidateCheckpoint(bad).message().find("toolCallLog[0].inputSummary"),
            std::string::npos);
  bad = cp;
  bad.ttl_days = 0;
  EXPECT_NE(ValidateCheckpoint(bad).message().find("ttlDays"), std::string::npos);
  bad = cp;
  bad.expire_at_ms += 1;
  EXPECT_NE(ValidateCheckpoint(bad).message().find("expireAt"), std::string::npos);
}

TEST(CheckpointJsonTest, NormalizationCutsOnCharacterBoundaries) {
  ContextSummary c;
  for (int i = 0; i < 60; ++i) {
    ToolCallEntry e;
    e.tool_name = "t" + std::to_string(i);
    std::string euro;  // 3-byte characters
    for (int k = 0; k < 300; ++k) euro += "\xE2\x82\xAC";
    e.input_summary = euro;
    e.output_summary.assign(499, 'a');
    e.output_summary.append("\xF0\x9F\x98\x80\xF0\x9F\x98\x80");  // two 4-byte characters
    c.tool_call_log.push_back(e);
  }
  c.draft_content = std::string(10, 'x') + std::string(8000, 'y');
  NormalizeContextSummary(&c);
  ASSERT_EQ(c.tool_call_log.size(), 50u);
  EXPECT_EQ(c.tool_call_log.front().tool_name, "t10");  // the newest 50 are kept
  EXPECT_EQ(c.tool_call_log.back().tool_name, "t59");
  EXPECT_EQ(c.tool_call_log[0].input_summary.size(), 600u);  // 200 characters of 3 bytes
  EXPECT_EQ(c.tool_call_log[0].output_summary, std::string(499, 'a') + "\xF0\x9F\x98\x80");
  EXPECT_EQ(c.draft_content, std::string(8000, 'y'));  // the tail is kept
  EXPECT_TRUE(ValidateContextSummary(c, "contextSummary").ok());
}

}  // namespace
}  // namespace agentckpt
