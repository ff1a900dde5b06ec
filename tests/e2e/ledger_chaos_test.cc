// The ledger's proof under SIGKILL (docs/tool-call-ledger.md): an agent runs write calls
// through the ledger against a sink this harness owns, which counts executions per key. Each
// cycle kills the sidecar with SIGKILL at one of four points around a write call (before begin,
// after begin, after the side effect before end, after end) and restarts it on the same SQLite
// store; the agent, which keeps nothing across a crash, then retries the call from its begin.
// Checked: 0 duplicate executions, every interrupted call surfaced as outcome_unknown (409), 0
// re-executions of a completed key. LEDGER_CHAOS_CYCLES sets the number of cycles (default 8).
// The Firestore variant runs the same on the in-repo emulator with injected faults (a store
// without a journal: each record is checkpointed before its reply, and a record whose reply was
// an error is retried; the agent verifies in the sink whatever the ledger says is open).
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/firestore/emulator_process.h"
#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

json Body(const HttpReply& r) { return json::parse(r.body, nullptr, false); }

enum KillPoint { kBeforeBegin, kAfterBegin, kAfterEffect, kAfterEnd, kNoKill };

struct Tally {
  std::map<std::string, int> executions;  // the sink: executions per key
  std::map<std::string, bool> completed;  // keys whose end the sidecar acknowledged
  int interrupted = 0;                    // calls killed between begin and end
  int surfaced = 0;                       // ... that the next begin answered 409 OUTCOME_UNKNOWN
  int reexecuted_completed = 0;
  int replays = 0;
  int begins = 0;
  int kills = 0;
  int retried = 0;  // requests sent again after a 503
};

class LedgerChaosTest : public SidecarEnvTest {
 protected:
  bool WaitReady(int timeout_ms) {
    for (int waited = 0; waited < timeout_ms; waited += 20) {
      if (HttpCall(port_, "GET", "/readyz").status == 200) return true;
      usleep(20 * 1000);
    }
    return false;
  }

  void KillAndRestart() {
    ASSERT_EQ(sidecar_->Signal(SIGKILL), 128 + SIGKILL);
    sidecar_.reset();
    ++t_.kills;
    sidecar_ = StartSidecar(env_);
    ASSERT_TRUE(WaitReady(20000)) << sidecar_->Stdout();
  }

  // A POST retried while the sidecar answers 503 (a store fault made the record not durable;
  // the agent sends it again), bounded.
  HttpReply Post(const std::string& path, const json& body) {
    HttpReply r;
    for (int i = 0; i < 50; ++i) {
      r = HttpCall(port_, "POST", path, body.dump());
      if (r.status != 503 && r.status != 0) return r;
      ++t_.retried;
    }
    return r;
  }

  // One write call as the agent makes it, with a kill at `kill` (the first attempt only). The
  // agent remembers nothing across the kill: it starts the call again from its begin.
  void RunCall(const std::string& key, KillPoint kill) {
    bool killed_open = false;
    for (int attempt = 0; attempt < 6; ++attempt) {
      const bool inject = attempt == 0;
      if (inject && kill == kBeforeBegin) {
        KillAndRestart();
        continue;
      }
      ++t_.begins;
      auto begun = Post("/v1/tool-calls/begin", json{{"toolName", "refund"},
                                                     {"effect", "write"},
                                                     {"idempotencyKey", key},
                                                     {"inputSummary", "refund " + key}});
      json b = Body(begun);
      if (begun.status == 200) {
        ++t_.replays;
        EXPECT_TRUE(t_.completed[key] || t_.executions[key] > 0) << key;
        return;
      }
      if (begun.status == 409) {
        ASSERT_EQ(b["code"], "OUTCOME_UNKNOWN") << begun.body;
        if (killed_open) ++t_.surfaced;
        killed_open = false;
        // Verify in the target system (the sink), then reconcile.
        const bool happened = t_.executions[key] > 0;
        auto rec = Post("/v1/tool-calls/" + b["callId"].get<std::string>() + "/reconcile",
                        json{{"outcome", happened ? "succeeded" : "not_executed"},
                             {"outputSummary", happened ? "found in the sink" : ""}});
        // 409 ALREADY_COMPLETED: an earlier try was applied but its reply was an error.
        ASSERT_TRUE(rec.status == 200 || rec.status == 409 || rec.status == 404) << rec.body;
        continue;
      }
      ASSERT_EQ(begun.status, 201) << begun.body;
      const std::string call_id = b["callId"];
      if (inject && kill == kAfterBegin) {
        ++t_.interrupted;
        killed_open = true;
        KillAndRestart();
        continue;
      }
      if (t_.completed[key]) ++t_.reexecuted_completed;
      ++t_.executions[key];  // the side effect
      if (inject && kill == kAfterEffect) {
        ++t_.interrupted;
        killed_open = true;
        KillAndRestart();
        continue;
      }
      auto ended = Post("/v1/tool-calls/" + call_id + "/end",
                        json{{"success", true}, {"outputSummary", "refunded"}});
      ASSERT_TRUE(ended.status == 200 || ended.status == 409) << ended.body;
      t_.completed[key] = true;
      if (inject && kill == kAfterEnd) {
        KillAndRestart();
        continue;  // the agent lost its memory of the end: it begins again and gets a replay
      }
      return;
    }
    ADD_FAILURE() << key << ": no outcome after 6 attempts";
  }

  void RunCycles(const std::string& store) {
    int cycles = 8;
    if (const char* n = std::getenv("LEDGER_CHAOS_CYCLES")) cycles = std::max(4, std::atoi(n));
    sidecar_ = StartSidecar(env_);
    ASSERT_TRUE(WaitReady(20000));
    for (int i = 0; i < cycles && !HasFatalFailure(); ++i) {
      // A call without a kill between kills, so completed keys pile up across restarts.
      RunCall("calm-" + std::to_string(i), kNoKill);
      RunCall("refund-" + std::to_string(i), static_cast<KillPoint>(i % 4));
    }
    int duplicates = 0;
    for (const auto& [key, n] : t_.executions) duplicates += n > 1 ? n - 1 : 0;
    std::printf(
        "ledger chaos: %d SIGKILL cycles (%s), %zu write keys, %d duplicate executions, %d/%d "
        "interrupted calls surfaced as outcome_unknown, %d re-executions of a completed key, "
        "%d replays, %.2f begins redone per crash, %d requests retried after a 503\n",
        t_.kills, store.c_str(), t_.executions.size(), duplicates, t_.surfaced, t_.interrupted,
        t_.reexecuted_completed, t_.replays,
        t_.kills > 0 ? static_cast<double>(t_.begins - 2 * cycles) / t_.kills : 0.0, t_.retried);
    EXPECT_EQ(t_.kills, cycles);
    EXPECT_EQ(duplicates, 0);
    EXPECT_EQ(t_.surfaced, t_.interrupted);
    EXPECT_EQ(t_.reexecuted_completed, 0);
    EXPECT_EQ(t_.executions.size(), static_cast<size_t>(2 * cycles));
  }

  std::map<std::string, std::string> env_ = {{"CKPT_PERIOD_S", "300"}};
  std::unique_ptr<SidecarProcess> sidecar_;
  Tally t_;
};

TEST_F(LedgerChaosTest, SigkillAtFourPointsNeverExecutesAWriteTwice) {
  RunCycles("SQLite, CKPT_DURABILITY=sync");
}

TEST_F(LedgerChaosTest, OnTheFirestoreEmulatorWithFaultsNothingIsExecutedTwice) {
  EmulatorProcess emulator;
  ASSERT_TRUE(emulator.Start().ok());
  env_["CKPT_STORE"] = "firestore://projects/ledger-chaos/databases/(default)";
  env_["FIRESTORE_EMULATOR_HOST"] = emulator.host_port();
  // The chaos runs' faults (docs/performance.md): 5% errors, 5% held 200 ms, 1% dropped replies.
  ASSERT_TRUE(emulator
                  .SetFaults({{"errorRate", 0.05},
                              {"errorStatus", 503},
                              {"delayRate", 0.05},
                              {"delayMs", 200},
                              {"dropRate", 0.01}})
                  .ok());
  RunCycles("Firestore emulator with faults, no journal: checkpoint per record");
  sidecar_.reset();
}

}  // namespace
}  // namespace agentckpt::testing
