// Approval gates end to end (docs/gates.md) with real processes: a real nats-server, the SQLite
// store and the `agentckpt` binary SIGKILLed while a gate is pending, after its resolution and
// after its consumption; resolutions over NATS and HTTP; double, conflicting and mismatched
// resolutions; expiry.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <future>
#include <nlohmann/json.hpp>
#include <string>

#include "nats/nats_handles.h"
#include "nats/subjects.h"
#include "tests/e2e/gate_test_base.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

constexpr char kArgs[] = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945";
constexpr char kOtherArgs[] = "0000000000000000000000000000000000000000000000000000000000000001";

class GateKillTest : public GateTestBase {
 protected:
  std::unique_ptr<SidecarProcess> Restart(std::unique_ptr<SidecarProcess> running) {
    EXPECT_EQ(running->Signal(SIGKILL), 128 + SIGKILL);
    running.reset();
    auto restarted = StartSidecar(Defaults());
    EXPECT_TRUE(WaitReady(port_, 10000)) << restarted->Stdout();
    return restarted;
  }

  json Gate(const std::string& id) { return Body(HttpCall(port_, "GET", "/v1/gates/" + id)); }

  json RequestBody(const std::string& id) {
    return {{"gateId", id},
            {"reason", "deploy to production"},
            {"toolCallId", "call-7"},
            {"argsSha256", kArgs},
            {"request", {{"tool", "deploy"}, {"args", {{"env", "prod"}}}}}};
  }
};

TEST_F(GateKillTest, PendingGateSurvivesSigkillAndANatsDecisionWakesTheWaitingAgent) {
  auto sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  auto r = HttpCall(port_, "POST", "/v1/gates", RequestBody("g1").dump());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["state"], "pending");
  EXPECT_TRUE(Body(r)["expiresAt"].is_string());
  // The checkpoint at the gate records it.
  ASSERT_FALSE(ListCheckpoints().empty());
  auto latest = OpenTestStore()->GetLatestVerified(kProcAgent);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_NE(latest->checkpoint.gates.find("\"g1\""), std::string::npos);

  natsSubscription* status = nullptr;
  ASSERT_EQ(natsConnection_SubscribeSync(&status, events_nc_, subjects::Status(kProcAgent).c_str()),
            NATS_OK);
  ASSERT_EQ(natsConnection_FlushTimeout(events_nc_, 2000), NATS_OK);
  sidecar = Restart(std::move(sidecar));
  // After the restore's "active", the agent is announced "suspended": its gate is pending.
  std::string last_status;
  for (natsMsg* m = nullptr; natsSubscription_NextMsg(&m, status, 5000) == NATS_OK;) {
    last_status = json::parse(natsMsg_GetData(m), nullptr, false).value("status", "");
    natsMsg_Destroy(m);
    if (last_status == "suspended") break;
  }
  agentckpt::nats_handles::UnsubscribeAndDestroy(events_nc_, status);
  EXPECT_EQ(last_status, "suspended");
  json pending = Body(HttpCall(port_, "GET", "/v1/gates?state=pending"));
  ASSERT_EQ(pending["gates"].size(), 1u) << pending.dump();
  EXPECT_EQ(pending["gates"][0]["gateId"], "g1");
  json restoration = Body(HttpCall(port_, "GET", "/v1/restoration"));
  EXPECT_NE(restoration.value("prompt", "").find("gate g1 pending"), std::string::npos)
      << restoration.dump();
  // checkpoint.restored carries the gates still to act on (GET /v1/restoration is its payload).
  ASSERT_EQ(restoration["gates"].size(), 1u) << restoration.dump();
  EXPECT_EQ(restoration["gates"][0]["state"], "pending");

  // The agent waits; the decision arrives over NATS and ends the wait.
  const int port = port_;
  auto waiting = std::async(
      std::launch::async, [port] { return HttpCall(port, "GET", "/v1/gates/g1?waitSeconds=60"); });
  json reply = Request(subjects::GateResolve(kProcAgent), json{{"gateId", "g1"},
                                                               {"decision", "approved"},
                                                               {"by", "alice"},
                                                               {"argsSha256", kArgs},
                                                               {"response", {{"note", "go"}}}}
                                                              .dump());
  ASSERT_EQ(reply["state"], "approved") << reply.dump();
  HttpReply waited = waiting.get();
  ASSERT_EQ(waited.status, 200) << waited.body;
  EXPECT_EQ(Body(waited)["state"], "approved");
  EXPECT_EQ(Body(waited)["decision"]["by"], "alice");

  sidecar = Restart(std::move(sidecar));
  json g = Gate("g1");
  EXPECT_EQ(g["state"], "approved") << g.dump();
  EXPECT_EQ(g["consumed"], false);
  EXPECT_EQ(g["decision"]["response"]["note"], "go");
  restoration = Body(HttpCall(port_, "GET", "/v1/restoration"));
  EXPECT_NE(restoration.value("prompt", "").find("gate g1 approved by alice"), std::string::npos)
      << restoration.dump();
  r = HttpCall(port_, "POST", "/v1/gates/g1/consume");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["consumed"], true);
  std::string consumed_at = Body(r)["consumedAt"];
  // Consumed once: again answers the same record.
  r = HttpCall(port_, "POST", "/v1/gates/g1/consume");
  EXPECT_EQ(Body(r)["consumedAt"], consumed_at);

  sidecar = Restart(std::move(sidecar));
  EXPECT_EQ(Gate("g1")["consumedAt"], consumed_at);
  restoration = Body(HttpCall(port_, "GET", "/v1/restoration"));
  EXPECT_EQ(restoration.value("prompt", "").find("gate g1"), std::string::npos)
      << "a consumed decision is not offered again: " << restoration.dump();
  EXPECT_FALSE(restoration.contains("gates")) << restoration.dump();
}

// The agent is a process of its own that waits on the long poll and is SIGKILLed while it waits
// (it holds no gate state: the gate lives in the sidecar). The decision made meanwhile is what
// the agent's next start finds, and the dead waiter holds nothing up: the sidecar still stops
// at once on SIGTERM.
TEST_F(GateKillTest, AWaitingAgentKilledWithSigkillFindsTheDecisionAtItsNextStart) {
  auto sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/gates", RequestBody("g-agent").dump()).status, 201);

  // The waiting agent: bash sends the long poll on a socket of its own, says so, and reads.
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const std::string script =
      "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port_) +
      " && printf 'GET /v1/gates/g-agent?waitSeconds=60 HTTP/1.1\\r\\nHost: agent\\r\\n\\r\\n' "
      ">&3 && echo sent && cat <&3";
  pid_t agent = ::fork();
  ASSERT_GE(agent, 0);
  if (agent == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::execlp("bash", "bash", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  char buf[16] = {};
  ssize_t n = ::read(out[0], buf, sizeof buf - 1);  // "sent": the request is on the wire
  ::close(out[0]);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, 4), "sent");
  ASSERT_EQ(::kill(agent, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(agent, &status, 0), agent);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  json reply = Request(
      subjects::GateResolve(kProcAgent),
      json{{"gateId", "g-agent"}, {"decision", "approved"}, {"by", "bob"}, {"argsSha256", kArgs}}
          .dump());
  ASSERT_EQ(reply["state"], "approved") << reply.dump();
  // The agent's next start: the decision, not yet consumed.
  json g = Gate("g-agent");
  EXPECT_EQ(g["state"], "approved") << g.dump();
  EXPECT_EQ(g["decision"]["by"], "bob");
  EXPECT_EQ(g["consumed"], false);
  // The dead waiter's connection does not hold the shutdown for its 60 s.
  EXPECT_EQ(sidecar->Signal(SIGTERM, 10000), 0) << sidecar->Stderr();
}

TEST_F(GateKillTest, DoubleConflictingAndMismatchedResolutions) {
  auto sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/gates", RequestBody("g2").dump()).status, 201);
  // The same request again: the same gate, unchanged.
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/gates", RequestBody("g2").dump()).status, 200);
  json changed = RequestBody("g2");
  changed["reason"] = "something else";
  EXPECT_EQ(HttpCall(port_, "POST", "/v1/gates", changed.dump()).status, 409);

  json approve = {{"decision", "approved"}, {"by", "bob"}, {"argsSha256", kOtherArgs}};
  auto r = HttpCall(port_, "POST", "/v1/gates/g2/resolve", approve.dump());
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(Body(r)["error"]["code"], "ARGS_MISMATCH");
  approve.erase("argsSha256");
  r = HttpCall(port_, "POST", "/v1/gates/g2/resolve", approve.dump());
  EXPECT_EQ(Body(r)["error"]["code"], "ARGS_MISMATCH") << r.body;
  EXPECT_EQ(Gate("g2")["state"], "pending");

  approve["argsSha256"] = kArgs;
  r = HttpCall(port_, "POST", "/v1/gates/g2/resolve", approve.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  std::string first = r.body;
  sidecar = Restart(std::move(sidecar));
  // Again (over NATS this time): the same answer.
  json again = Request(subjects::GateResolve(kProcAgent),
                       json{{"gateId", "g2"}, {"decision", "approved"}, {"by", "bob"}}.dump());
  EXPECT_EQ(again, json::parse(first));
  // A conflicting decision: 409 with the first decision.
  r = HttpCall(port_, "POST", "/v1/gates/g2/resolve",
               json{{"decision", "rejected"}, {"by", "carol"}}.dump());
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(Body(r)["error"]["code"], "CONFLICT");
  EXPECT_EQ(Body(r)["gate"]["decision"]["by"], "bob");
  EXPECT_EQ(Body(r)["gate"]["state"], "approved");
  json nats_conflict =
      Request(subjects::GateResolve(kProcAgent),
              json{{"gateId", "g2"}, {"decision", "rejected"}, {"by", "carol"}}.dump());
  EXPECT_EQ(nats_conflict["error"]["code"], "CONFLICT") << nats_conflict.dump();
  EXPECT_EQ(nats_conflict["gate"]["decision"]["by"], "bob");
  EXPECT_EQ(HttpCall(port_, "POST", "/v1/gates/nope/resolve", approve.dump()).status, 404);
}

TEST_F(GateKillTest, AnExpiredGateIsRejectedDurablyAndRefusesLaterApproval) {
  auto sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  json body = {{"gateId", "g3"}, {"reason", "short wait"}, {"ttlSeconds", 1}};
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/gates", body.dump()).status, 201);
  // The waiting request ends at the expiry (not at the end of its 60 s).
  auto r = HttpCall(port_, "GET", "/v1/gates/g3?waitSeconds=60");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["state"], "rejected");
  EXPECT_EQ(Body(r)["decision"]["expired"], true);
  sidecar = Restart(std::move(sidecar));
  json g = Gate("g3");
  EXPECT_EQ(g["state"], "rejected") << g.dump();
  EXPECT_EQ(g["decision"]["expired"], true);
  r = HttpCall(port_, "POST", "/v1/gates/g3/resolve",
               json{{"decision", "approved"}, {"by", "late"}}.dump());
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(Body(r)["gate"]["decision"]["expired"], true);
}

}  // namespace
}  // namespace agentckpt::testing
