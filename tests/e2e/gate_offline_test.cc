// Approval gates decided while the sidecar is down (docs/gates.md "No decision lost"): the CLI
// writes the decision to the store under the writer lease, and the restarted sidecar has it;
// while a live sidecar holds the lease, the CLI decides over NATS and never writes around it.
// The offline decision runs on each built-in store: SQLite, the JetStream store on the test's
// nats-server, and Firestore (the in-repo emulator, in builds with the Firestore backend).
// Real processes: nats-server, the store (and the emulator), the `agentckpt` binary (sidecar and
// CLI).
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_runner.h"
#include "tests/e2e/gate_test_base.h"
#if AGENTCKPT_WITH_FIRESTORE
#include "tests/firestore/emulator_process.h"
#endif

namespace agentckpt::testing {
namespace {

using nlohmann::json;

const std::string kArgs(64, 'f');

class GateOfflineTest : public GateTestBase {
 protected:
  // The sidecar's settings, with the store's (CKPT_STORE and what it needs) from store_env_.
  std::map<std::string, std::string> Settings() {
    std::map<std::string, std::string> env = Defaults();
    for (const auto& [k, v] : store_env_) env[k] = v;
    return env;
  }
  std::string StoreUrl() { return SidecarEnv(store_env_).at("CKPT_STORE"); }
  CliResult Gate(std::vector<std::string> args) {
    args.insert(args.begin(), "gate");
    args.insert(args.end(), {"--agent", kProcAgent, "--store", StoreUrl(), "--json"});
    std::map<std::string, std::string> env = store_env_;
    env["NATS_URL"] = nats_->url();
    return RunCli(args, env);
  }
  void RequestGate(const std::string& id) {
    auto r =
        HttpCall(port_, "POST", "/v1/gates",
                 json{{"gateId", id}, {"reason", "pay the invoice"}, {"argsSha256", kArgs}}.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  // Two gates requested, the sidecar SIGKILLed, one approved and one rejected by the CLI through
  // the store, the sidecar restarted: it has both decisions and its journal goes on after them.
  void DecideWhileTheSidecarIsDown();

  std::map<std::string, std::string> store_env_;  // empty: the fixture's SQLite file
};

void GateOfflineTest::DecideWhileTheSidecarIsDown() {
  auto sidecar = StartSidecar(Settings());
  ASSERT_TRUE(WaitReady(port_, 10000));
  RequestGate("offline-1");
  RequestGate("offline-2");
  ASSERT_EQ(sidecar->Signal(SIGKILL), 128 + SIGKILL);
  sidecar.reset();

  CliResult listed = Gate({"list", "--state", "pending"});
  ASSERT_EQ(listed.exit_code, 0) << Describe(listed);
  EXPECT_EQ(listed.Json()["gates"].size(), 2u) << Describe(listed);
  // The approval without the args hash is refused; with it, written to the store.
  CliResult refused = Gate({"approve", "offline-1", "--by", "ops"});
  EXPECT_EQ(refused.exit_code, 1) << Describe(refused);
  CliResult approved = Gate({"approve", "offline-1", "--by", "ops", "--args-sha256", kArgs,
                             "--response", R"({"limit":100})"});
  ASSERT_EQ(approved.exit_code, 0) << Describe(approved);
  EXPECT_EQ(approved.Json()["via"], "store");
  EXPECT_EQ(approved.Json()["state"], "approved");
  CliResult rejected = Gate({"reject", "offline-2", "--by", "ops"});
  ASSERT_EQ(rejected.exit_code, 0) << Describe(rejected);
  // Single use offline too: a different decision is a conflict.
  CliResult conflict = Gate({"reject", "offline-1", "--by", "someone"});
  EXPECT_EQ(conflict.exit_code, 1) << Describe(conflict);

  sidecar = StartSidecar(Settings());
  ASSERT_TRUE(WaitReady(port_, 10000)) << sidecar->Stdout();
  json g1 = Body(HttpCall(port_, "GET", "/v1/gates/offline-1"));
  EXPECT_EQ(g1["state"], "approved") << g1.dump();
  EXPECT_EQ(g1["decision"]["by"], "ops");
  EXPECT_EQ(g1["decision"]["response"]["limit"], 100);
  EXPECT_EQ(Body(HttpCall(port_, "GET", "/v1/gates/offline-2"))["state"], "rejected");
  json restoration = Body(HttpCall(port_, "GET", "/v1/restoration"));
  EXPECT_NE(restoration.value("prompt", "").find("gate offline-1 approved by ops"),
            std::string::npos)
      << restoration.dump();
  // The journal goes on from the CLI's entries: the next change is durable.
  auto r = HttpCall(port_, "POST", "/v1/gates/offline-1/consume");
  ASSERT_EQ(r.status, 200) << r.body;
  CliResult shown = Gate({"show", "offline-1"});
  ASSERT_EQ(shown.exit_code, 0) << Describe(shown);
  EXPECT_EQ(shown.Json()["consumed"], true) << Describe(shown);
}

TEST_F(GateOfflineTest, ADecisionMadeWhileTheSidecarIsDownIsThereWhenItComesBack) {
  DecideWhileTheSidecarIsDown();
}

TEST_F(GateOfflineTest, OnTheJetStreamStoreADecisionMadeWhileTheSidecarIsDownIsKept) {
  // On NATS_URL (the test's server); create=1 makes the store's streams.
  store_env_ = {{"CKPT_STORE", "jetstream:///AGENTCKPT?create=1"}};
  DecideWhileTheSidecarIsDown();
}

#if AGENTCKPT_WITH_FIRESTORE
TEST_F(GateOfflineTest, OnFirestoreADecisionMadeWhileTheSidecarIsDownIsKept) {
  EmulatorProcess emulator;
  ASSERT_TRUE(emulator.Start().ok());
  store_env_ = {{"CKPT_STORE", "firestore://projects/gate-offline/databases/(default)"},
                {"FIRESTORE_EMULATOR_HOST", emulator.host_port()}};
  DecideWhileTheSidecarIsDown();
}
#endif

TEST_F(GateOfflineTest, WithTheSidecarUpTheCliDecidesOverNatsAndNeverAroundTheLease) {
  auto sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  RequestGate("online-1");
  CliResult approved = Gate({"approve", "online-1", "--by", "ops", "--args-sha256", kArgs});
  ASSERT_EQ(approved.exit_code, 0) << Describe(approved);
  EXPECT_EQ(approved.Json()["via"], "nats");
  EXPECT_EQ(Body(HttpCall(port_, "GET", "/v1/gates/online-1"))["state"], "approved");
  // The sidecar stops answering NATS (SIGSTOP) but keeps its live lease: the CLI must not write.
  RequestGate("online-2");
  ASSERT_EQ(kill(sidecar->pid(), SIGSTOP), 0);
  CliResult fenced = Gate({"reject", "online-2", "--by", "ops", "--timeout-ms", "500"});
  ASSERT_EQ(kill(sidecar->pid(), SIGCONT), 0);
  EXPECT_EQ(fenced.exit_code, 3) << Describe(fenced);
  EXPECT_NE(fenced.err.find("holds the writer lease"), std::string::npos) << Describe(fenced);
  // The request the stopped sidecar had not read yet is still its to answer once it runs again
  // (the decision may land); what must not happen is a write by the CLI: every journal entry
  // carries the sidecar's lease epoch.
  json ready = Body(HttpCall(port_, "GET", "/readyz"));
  ASSERT_TRUE(ready["lease"].contains("epoch")) << ready.dump();
  const int64_t epoch = ready["lease"]["epoch"];
  EXPECT_NE(HttpCall(port_, "GET", "/v1/gates/online-2?waitSeconds=5").status, 0);
  auto journal = OpenTestStore()->ReadJournal(kProcAgent, 0);
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  for (const auto& e : *journal) EXPECT_EQ(e.epoch, epoch) << e.sequence;
  json g2 = Body(HttpCall(port_, "GET", "/v1/gates/online-2"));
  if (g2["state"] != "pending") {
    EXPECT_EQ(g2["decision"]["by"], "ops") << g2.dump();
  }
}

}  // namespace
}  // namespace agentckpt::testing
