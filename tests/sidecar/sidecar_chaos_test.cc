// Process-level failure behaviour of `agentckpt run`: SIGTERM in the middle of steady work, and
// the NATS server killed and restarted while the sidecar runs.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "nats/subjects.h"
#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

class SidecarChaosTest : public SidecarEnvTest {};

std::string ToolCall(int i) {
  return json{{"toolName", "step"},
              {"timestamp", "2026-11-03T02:40:00.000Z"},
              {"inputSummary", "input " + std::to_string(i)},
              {"outputSummary", "output " + std::to_string(i)},
              {"durationMs", i},
              {"success", true}}
      .dump();
}

TEST_F(SidecarChaosTest, SigtermDuringSteadyWorkAlwaysLeavesADurablePreShutdownCheckpoint) {
  for (int rep = 0; rep < 20; ++rep) {
    SCOPED_TRACE("repetition " + std::to_string(rep));
    auto sidecar = StartSidecar();
    ASSERT_EQ(
        HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
        200);
    std::atomic<bool> stop{false};
    std::atomic<int> calls{0};
    // Steady work: tool calls, progress updates and manual checkpoints, until the sidecar goes.
    std::thread agent([&] {
      for (int i = 0; !stop; ++i) {
        HttpCall(port_, "POST", "/v1/tool-calls", ToolCall(i));
        HttpCall(port_, "PATCH", "/v1/context",
                 R"({"activeTask":{"progress":)" + std::to_string(i % 100) + "}}");
        if (i % 3 == 0) HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"manual"})");
        ++calls;
      }
    });
    while (calls < 2 + rep % 5) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    auto start = std::chrono::steady_clock::now();
    int code = sidecar->Signal(SIGTERM, 10000);
    auto elapsed = std::chrono::steady_clock::now() - start;
    stop = true;
    agent.join();
    ASSERT_EQ(code, 0) << sidecar->Stderr();
    EXPECT_LT(elapsed, std::chrono::seconds(5));
    auto store = OpenTestStore();
    auto latest = store->GetLatestVerified(kProcAgent);
    ASSERT_TRUE(latest.ok()) << latest.status().ToString();
    EXPECT_EQ(latest->checkpoint.trigger_reason, TriggerReason::kPreShutdown);
    EXPECT_TRUE(latest->skipped.empty());
  }
}

TEST_F(SidecarChaosTest, NatsKilledAndRestartedMidRun) {
  // The sidecar retries every 1.5 s and the test's subscriber every 50 ms, so the subscriber is
  // back before the sidecar sends what it buffered.
  auto sidecar = StartSidecar({{"CKPT_NATS_RECONNECT_WAIT_MS", "1500"}});
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
            200);
  ASSERT_TRUE(NextEvent().is_object());

  nats_->Kill();
  // Triggers keep writing to the store while NATS is down.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (HttpCall(port_, "GET", "/readyz").status != 503 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(HttpCall(port_, "GET", "/readyz").status, 503);
  std::vector<std::string> during;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(HttpCall(port_, "POST", "/v1/tool-calls", ToolCall(i)).status, 201);
    HttpReply r = HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"manual"})");
    ASSERT_EQ(r.status, 201) << r.body;
    during.push_back(json::parse(r.body)["checkpointId"]);
  }
  auto list = ListCheckpoints();
  ASSERT_EQ(list.size(), 4u);
  // The position is the last known one (NATS could not be asked).
  json doc = json::parse(HttpCall(port_, "GET", "/v1/checkpoints/" + during.back()).body);
  EXPECT_TRUE(doc["natsPosition"].is_object());
  EXPECT_NE(HttpCall(port_, "GET", "/metrics").body.find("agentckpt_nats_position_stale_total 3"),
            std::string::npos);

  nats_->Restart();
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (HttpCall(port_, "GET", "/readyz").status != 200 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(HttpCall(port_, "GET", "/readyz").status, 200);
  // The events of the outage were buffered and are published late, in order.
  std::vector<std::string> received;
  while (received.size() < during.size()) {
    json event = NextEvent(5000);
    if (!event.is_object()) break;
    if (event["subject"] == subjects::CheckpointCreated(kProcAgent)) {
      received.push_back(event["data"]["checkpointId"]);
    }
  }
  EXPECT_EQ(received, during);
  // And the sidecar works normally afterwards, NATS control subjects included.
  json reply = Request(subjects::CheckpointCreate(kProcAgent), R"({"trigger":"manual"})");
  ASSERT_TRUE(reply.is_object());
  EXPECT_EQ(reply["sequenceNumber"], 5);
  std::string metrics = HttpCall(port_, "GET", "/metrics").body;
  EXPECT_NE(metrics.find("agentckpt_nats_connected 1"), std::string::npos);
  EXPECT_NE(metrics.find("agentckpt_nats_reconnects_total 1"), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("agentckpt_nats_events_dropped_total{"), std::string::npos) << metrics;
  EXPECT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
}

}  // namespace
}  // namespace agentckpt::testing
