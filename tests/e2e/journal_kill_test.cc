// The journal end to end: every update the sidecar answered 2xx survives a SIGKILL of the
// sidecar at default settings (CKPT_PERIOD_S=300, no checkpoint asked for), and a standby
// sidecar refuses updates instead of accepting and dropping them.
#include <signal.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/sidecar/sidecar_test_env.h"
#include "tests/support/nats_server.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

json Body(const HttpReply& r) { return json::parse(r.body, nullptr, false); }

class JournalKillTest : public SidecarEnvTest {
 protected:
  // Default period and restore at start, as a new user runs it.
  std::map<std::string, std::string> Defaults() {
    return {{"CKPT_PERIOD_S", "300"}, {"CKPT_RESTORE_ON_START", "true"}};
  }

  // Sends `n` updates the way an agent does (patches and tool calls, back to back); checks each
  // reply says durable with a rising journal sequence; returns the last sequence.
  int64_t SendUpdates(int port, int n, int64_t after) {
    int64_t last = after;
    for (int i = 0; i < n; ++i) {
      HttpReply r;
      if (i % 2 == 0) {
        r = HttpCall(port, "PATCH", "/v1/context",
                     json{{"contextSummary",
                           {{"completedSteps", after + i},
                            {"draftContent", "draft after step " + std::to_string(after + i)}}}}
                         .dump());
        EXPECT_EQ(r.status, 200) << r.body;
      } else {
        r = HttpCall(port, "POST", "/v1/tool-calls",
                     json{{"toolName", "search"},
                          {"timestamp", "2026-01-01T00:00:00.000Z"},
                          {"inputSummary", "query " + std::to_string(i)},
                          {"outputSummary", "result " + std::to_string(i)},
                          {"durationMs", 12},
                          {"success", true}}
                         .dump());
        EXPECT_EQ(r.status, 201) << r.body;
      }
      json b = Body(r);
      EXPECT_EQ(b.value("durable", false), true) << r.body;
      EXPECT_EQ(b.value("journalSequence", int64_t{0}), last + 1) << r.body;
      last = b.value("journalSequence", last);
    }
    return last;
  }

  bool WaitReady(int port, int timeout_ms) {
    for (int waited = 0; waited < timeout_ms; waited += 50) {
      if (HttpCall(port, "GET", "/readyz").status == 200) return true;
      usleep(50 * 1000);
    }
    return false;
  }
};

TEST_F(JournalKillTest, EveryAcknowledgedUpdateSurvivesSigkillAtDefaultSettings) {
  auto sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  // A context without an active task: no phase change, so no checkpoint is ever written here.
  json put = Body(HttpCall(port_, "GET", "/v1/context"));
  put["contextSummary"]["gatheringResults"] = "what the agent found";
  auto r = HttpCall(port_, "PUT", "/v1/context", put.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(Body(r)["journalSequence"], 1);
  int64_t last = SendUpdates(port_, 40, 1);
  std::string before = HttpCall(port_, "GET", "/v1/context").body;
  ASSERT_TRUE(ListCheckpoints().empty());
  sidecar->Kill();

  auto restarted = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000)) << restarted->Stdout();
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/context").body, before);
  // The journal continues where it was: the next update gets the next sequence.
  EXPECT_EQ(SendUpdates(port_, 2, last), last + 2);
}

TEST_F(JournalKillTest, RestoreFoldsTheTailAfterTheCheckpointAndReportsIt) {
  auto sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  // The fixture has an active task: the PUT writes a task_phase_change checkpoint.
  auto r = HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json"));
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(Body(r)["checkpoint"].is_object()) << r.body;
  int64_t last = SendUpdates(port_, 25, Body(r)["journalSequence"].get<int64_t>());
  std::string before = HttpCall(port_, "GET", "/v1/context").body;
  ASSERT_EQ(sidecar->Signal(SIGKILL), 128 + SIGKILL);

  auto restarted = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000)) << restarted->Stdout();
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/context").body, before);
  json restoration = Body(HttpCall(port_, "GET", "/v1/restoration"));
  ASSERT_TRUE(restoration.is_object());
  EXPECT_EQ(restoration["journal"]["applied"], 25) << restoration.dump();
  EXPECT_EQ(restoration["journal"]["lastSequence"], last);
  EXPECT_EQ(restoration["journal"]["stopped"], false);
  EXPECT_NE(restoration["prompt"].get<std::string>().find("25 journal entries folded in"),
            std::string::npos);
}

TEST_F(JournalKillTest, AStandbyRefusesUpdatesAndTakesOverWithEveryAcknowledgedOne) {
  auto writer = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  const int writer_port = port_;
  int64_t last = SendUpdates(writer_port, 6, 0);

  TempDir standby_dir;
  port_ = PickFreePort();
  auto env = Defaults();
  env["CKPT_HTTP_ADDR"] = "127.0.0.1:" + std::to_string(port_);
  auto standby = std::make_unique<SidecarProcess>(SidecarEnv(env), standby_dir.path());
  ASSERT_TRUE(standby->WaitHealthy(port_)) << standby->Describe();
  auto refused = HttpCall(port_, "PATCH", "/v1/context",
                          R"({"contextSummary":{"draftContent":"sent to the standby"}})");
  EXPECT_EQ(refused.status, 503) << refused.body;
  json err = Body(refused)["error"];
  EXPECT_EQ(err["code"], "STANDBY");
  EXPECT_FALSE(err["holder"].get<std::string>().empty()) << refused.body;
  EXPECT_TRUE(refused.headers.count("Retry-After") || refused.headers.count("retry-after"));
  // Reading the context from the standby is refused too: it does not have the agent's context.
  auto read = HttpCall(port_, "GET", "/v1/context");
  EXPECT_EQ(read.status, 503) << read.body;
  EXPECT_EQ(Body(read)["error"]["code"], "STANDBY") << read.body;
  EXPECT_EQ(HttpCall(port_, "POST", "/v1/tool-calls",
                     R"({"toolName":"t","timestamp":"2026-01-01T00:00:00.000Z","inputSummary":"",)"
                     R"("outputSummary":"","durationMs":1,"success":true})")
                .status,
            503);

  last = SendUpdates(writer_port, 4, last);
  std::string before = HttpCall(writer_port, "GET", "/v1/context").body;
  writer->Kill();
  // The standby finds the holder's process gone and takes over at its next retry.
  ASSERT_TRUE(WaitReady(port_, 20000)) << standby->Stdout();
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/context").body, before);
  EXPECT_EQ(SendUpdates(port_, 1, last), last + 1);
}

}  // namespace
}  // namespace agentckpt::testing
