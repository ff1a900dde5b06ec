// The console's handler and diff code without a browser: bearer-token refusals, the embedded
// page, every read-only endpoint over a real SQLite store, and the checkpoint diff.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "console/checkpoint_diff.h"
#include "console/console_api.h"
#include "store/checkpoint_store.h"
#include "tests/store/store_test_util.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

class ConsoleApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenStore("sqlite://" + dir_.File("store.db"));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    for (const char* agent : {"agent-b", "agent-a"}) {
      for (int64_t s = 1; s <= 3; ++s) ASSERT_TRUE(store_->Put(SealedAt(agent, s), {}).ok());
    }
    ConsoleOptions options;
    options.bearer_token = "secret";
    api_ = std::make_unique<ConsoleApi>(store_.get(), options);
  }
  ApiResponse Get(const std::string& path, const std::string& auth = "Bearer secret",
                  std::map<std::string, std::string> query = {}) {
    ApiRequest r;
    r.method = "GET";
    r.path = path;
    r.query = std::move(query);
    r.authorization = auth;
    return api_->Handle(r);
  }
  TempDir dir_;
  std::unique_ptr<CheckpointStore> store_;
  std::unique_ptr<ConsoleApi> api_;
};

TEST_F(ConsoleApiTest, ApiNeedsTheTokenThePageDoesNot) {
  for (const std::string auth : {"", "Bearer wrong", "Basic secret"}) {
    ApiResponse r = Get("/api/fleet", auth);
    EXPECT_EQ(r.status, 401) << auth;
    EXPECT_EQ(json::parse(r.body)["error"]["code"], "UNAUTHENTICATED");
    EXPECT_EQ(r.headers["WWW-Authenticate"], "Bearer");
  }
  EXPECT_EQ(Get("/api/fleet", "bearer  secret ").status, 200);
  ApiResponse page = Get("/", "");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("/assets/app.js"), std::string::npos);
  EXPECT_EQ(Get("/assets/app.js", "").content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(Get("/assets/nothing.js", "").status, 404);
  json session = json::parse(Get("/api/session", "Bearer wrong").body);
  EXPECT_EQ(session, json({{"tokenRequired", true}, {"authorized", false}}));
}

TEST_F(ConsoleApiTest, FleetTimelineCheckpointAndDiff) {
  json fleet = json::parse(Get("/api/fleet").body);
  ASSERT_EQ(fleet["agents"].size(), 2u);
  EXPECT_EQ(fleet["agents"][0]["agentId"], "agent-a");
  EXPECT_EQ(fleet["agents"][0]["lastCheckpoint"]["sequenceNumber"], 3);
  EXPECT_EQ(fleet["agents"][0]["corrupted"], 0);
  EXPECT_EQ(fleet["agents"][0]["pendingGates"], 0);

  json timeline = json::parse(Get("/api/agents/agent-a/timeline").body);
  ASSERT_EQ(timeline["checkpoints"].size(), 3u);
  EXPECT_EQ(timeline["checkpoints"][0]["sequenceNumber"], 1);
  EXPECT_EQ(timeline["phases"].size(), 1u);
  EXPECT_EQ(Get("/api/agents/nobody/timeline").status, 404);
  EXPECT_EQ(Get("/api/agents/bad%20id/timeline").status, 400);

  json cp = json::parse(Get("/api/agents/agent-a/checkpoints/2").body);
  EXPECT_EQ(cp["verification"]["ok"], true);
  EXPECT_EQ(cp["checkpoint"]["sequenceNumber"], 2);
  EXPECT_EQ(Get("/api/agents/agent-a/checkpoints/9").status, 404);

  ApiResponse diff = Get("/api/agents/agent-a/diff", "Bearer secret", {{"from", "1"}, {"to", "3"}});
  ASSERT_EQ(diff.status, 200) << diff.body;
  json d = json::parse(diff.body);
  EXPECT_EQ(d["draft"]["linesAdded"], 1);
  EXPECT_EQ(d["draft"]["linesRemoved"], 1);
  EXPECT_EQ(Get("/api/agents/agent-a/diff").status, 400);
}

TEST(CheckpointDiffTest, NamesWhatChanged) {
  Checkpoint a = MakeCheckpoint("agent-a", 1);
  Checkpoint b = MakeCheckpoint("agent-a", 2);
  b.active_task->phase = TaskPhase::kReviewing;
  b.active_task->progress = 90;
  b.context_summary.plan_outline = {"intro", "outro", "review"};
  b.context_summary.tool_call_log.push_back(
      ToolCallEntry{"web_search", 1793760400000, "q", "r", 5, true});
  a.nats_position = NatsPosition{"S", "C", 10, 0};
  b.nats_position = NatsPosition{"S", "C", 14, 0};
  json d = DiffCheckpoints(a, b);
  EXPECT_EQ(d["task"]["phase"], json({{"from", "executing"}, {"to", "reviewing"}, {"changed", true}}));
  EXPECT_EQ(d["task"]["progress"], json({{"from", 40}, {"to", 90}, {"changed", true}}));
  EXPECT_EQ(d["task"]["taskId"]["changed"], false);
  EXPECT_EQ(d["plan"]["added"], json({"review"}));
  EXPECT_EQ(d["plan"]["removed"], json({"body"}));
  ASSERT_EQ(d["toolCalls"]["added"].size(), 1u);
  EXPECT_EQ(d["toolCalls"]["added"][0]["toolName"], "web_search");
  EXPECT_EQ(d["lastAckedSequence"]["delta"], 4);
}

TEST(CheckpointDiffTest, LineDiffKeepsCommonLines) {
  std::vector<DiffLine> lines = DiffLines("a\nb\nc", "a\nx\nc\nd");
  std::string ops;
  for (const DiffLine& l : lines) ops += std::string(1, l.op) + l.text + ";";
  EXPECT_EQ(ops, " a;-b;+x; c;+d;");
}

}  // namespace
}  // namespace agentckpt::testing
