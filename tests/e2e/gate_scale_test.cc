// Approval gates at scale and with two sidecars (docs/gates.md): 100 gates pending at once
// survive a SIGKILL and are all decided over NATS; with two sidecars on one store only the lease
// holder decides, and the standby that takes over has every decision. Real nats-server, SQLite
// store and `agentckpt` processes.
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "nats/subjects.h"
#include "tests/e2e/gate_test_base.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

class GateScaleTest : public GateTestBase {
 protected:
  json Resolve(const std::string& id, const std::string& decision) {
    return Request(subjects::GateResolve(kProcAgent),
                   json{{"gateId", id}, {"decision", decision}, {"by", "ops"}}.dump());
  }
};

TEST_F(GateScaleTest, AHundredPendingGatesSurviveSigkillAndAreEachDecidedOnce) {
  auto sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  for (int i = 0; i < 100; ++i) {
    auto r = HttpCall(
        port_, "POST", "/v1/gates",
        json{{"gateId", "bulk-" + std::to_string(i)}, {"reason", "step " + std::to_string(i)}}
            .dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  ASSERT_EQ(Body(HttpCall(port_, "GET", "/v1/gates?state=pending"))["gates"].size(), 100u);
  ASSERT_EQ(sidecar->Signal(SIGKILL), 128 + SIGKILL);
  sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000)) << sidecar->Stdout();
  ASSERT_EQ(Body(HttpCall(port_, "GET", "/v1/gates?state=pending"))["gates"].size(), 100u);
  // The prompt lists some and says how many more there are, within its token budget.
  json restoration = Body(HttpCall(port_, "GET", "/v1/restoration"));
  const std::string prompt = restoration.value("prompt", "");
  EXPECT_NE(prompt.find("## Approval gates (100 to act on"), std::string::npos) << prompt;
  EXPECT_LE(restoration.value("promptTokens", 0), 4000) << restoration.dump();
  for (int i = 0; i < 100; ++i) {
    json reply = Resolve("bulk-" + std::to_string(i), i % 2 ? "approved" : "rejected");
    ASSERT_EQ(reply["state"], i % 2 ? "approved" : "rejected") << reply.dump();
  }
  EXPECT_TRUE(Body(HttpCall(port_, "GET", "/v1/gates?state=pending"))["gates"].empty());
  json again = Resolve("bulk-1", "rejected");
  EXPECT_EQ(again["error"]["code"], "CONFLICT") << again.dump();
  ASSERT_EQ(sidecar->Signal(SIGKILL), 128 + SIGKILL);
  sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000)) << sidecar->Stdout();
  EXPECT_EQ(Body(HttpCall(port_, "GET", "/v1/gates?state=approved"))["gates"].size(), 50u);
  EXPECT_EQ(Body(HttpCall(port_, "GET", "/v1/gates?state=rejected"))["gates"].size(), 50u);
}

TEST_F(GateScaleTest, WithTwoSidecarsOnlyTheLeaseHolderDecides) {
  auto holder = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  const int holder_port = port_;
  ASSERT_EQ(
      HttpCall(holder_port, "POST", "/v1/gates", json{{"gateId", "pair-1"}, {"reason", "r"}}.dump())
          .status,
      201);
  TempDir standby_dir;
  port_ = PickFreePort();
  auto env = Defaults();
  env["CKPT_HTTP_ADDR"] = "127.0.0.1:" + std::to_string(port_);
  auto standby = std::make_unique<SidecarProcess>(SidecarEnv(env), standby_dir.path());
  ASSERT_TRUE(standby->WaitHealthy(port_)) << standby->Describe();
  const int standby_port = port_;
  auto refused = HttpCall(standby_port, "POST", "/v1/gates/pair-1/resolve",
                          R"({"decision":"rejected","by":"standby-user"})");
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_EQ(Body(refused)["error"]["code"], "STANDBY");
  EXPECT_EQ(HttpCall(standby_port, "POST", "/v1/gates", R"({"reason":"r"})").status, 503);
  // Both receive the NATS request; the holder's answer is the one that arrives, every time.
  for (int i = 0; i < 5; ++i) {
    json reply = Resolve("pair-1", "approved");
    ASSERT_EQ(reply["state"], "approved") << reply.dump();
    EXPECT_EQ(reply["decision"]["by"], "ops");
  }
  // The standby takes over with the decision.
  holder->Kill();
  ASSERT_TRUE(WaitReady(standby_port, 20000)) << standby->Stdout();
  json g = Body(HttpCall(standby_port, "GET", "/v1/gates/pair-1"));
  EXPECT_EQ(g["state"], "approved") << g.dump();
  json conflict = Resolve("pair-1", "rejected");
  EXPECT_EQ(conflict["error"]["code"], "CONFLICT") << conflict.dump();
}

}  // namespace
}  // namespace agentckpt::testing
