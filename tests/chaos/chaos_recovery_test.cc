// Runs the chaos harness (bench/chaos) for 20 cycles of mixed SIGKILL (agent, sidecar or both)
// and SIGTERM (pod shutdown) crashes against a real nats-server, the real sidecar binary, the
// reference agent and the SQLite store, at the default settings (CKPT_PERIOD_S=300, sync
// durability, no checkpoint requested by the agent), and checks the correctness targets from
// its summary: no acknowledged update lost, nothing confirmed lost, no side effects during
// replay, every restore inside the 30 s SLA, the pre_shutdown checkpoint durable, the agent
// continuing from what was restored. Timing targets
// are not asserted here (they depend on the machine); scripts/chaos reports them. The writer
// lease is shortened to 3 s so that sidecar restarts after SIGKILL (which wait for the dead
// holder's lease to expire) keep the test short. A second, shorter run does the same on the
// Firestore emulator with injected faults (errors, delays, dropped replies), which the sidecar's
// retries and hedged requests must absorb without losing or duplicating anything. A third runs
// SIGKILL cycles on the JetStream store (R3) on a 3-node nats-server cluster, where half of the
// cycles also SIGKILL one nats-server at a random moment (every third time the leader of the
// store's agent-record stream) and restart it later: the same correctness targets, with restores
// that meet a leader election.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"

extern char** environ;

namespace agentckpt::testing {
namespace {

using nlohmann::json;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `argv` with output to `log`; returns its exit code, or -1 if it had to be killed after
// `timeout_s`.
int RunBounded(const std::vector<std::string>& argv, const std::string& log, int timeout_s) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -2;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);  // its children die with it (PR_SET_PDEATHSIG)
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The last `lines` lines of the file at `path`.
std::string Tail(const std::string& path, size_t lines) {
  std::vector<std::string> kept;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    kept.push_back(std::move(line));
    if (kept.size() > lines) kept.erase(kept.begin());
  }
  std::string out;
  for (const std::string& l : kept) out += "    " + l + "\n";
  return out;
}

// The tail of every log the harness kept (the agent's, the sidecar's and, on a cluster, each
// nats-server's, of every cycle with an anomaly) under `logs_dir`. The run's directory is removed
// with the test, so on a failure this output is all that is left of them.
std::string KeptLogTails(const std::string& logs_dir) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(logs_dir, ec)) {
    paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  std::string out = "logs kept by the harness (" + std::to_string(paths.size()) + "):\n";
  for (const std::string& path : paths) {
    out += "  " + path.substr(logs_dir.size() + 1) + ", last lines:\n" + Tail(path, 25);
  }
  return out;
}

// Runs the harness with `args` (cycles, mode, store...) and checks every correctness target of
// its summary; returns the summary.
json RunAndCheckCorrectness(const std::vector<std::string>& args, int cycles, int timeout_s) {
  std::string bin = std::getenv("AGENTCKPT_BIN");
  std::string bin_dir = bin.substr(0, bin.rfind('/'));
  TempDir dir;
  std::string out = dir.File("run");
  std::string log = dir.File("harness.log");
  std::vector<std::string> argv = {bin_dir + "/chaos_harness", "run", "--cycles",
                                   std::to_string(cycles)};
  argv.insert(argv.end(), args.begin(), args.end());
  for (const char* a :
       {"--out", out.c_str(), "--bin-dir", bin_dir.c_str(), "--no-timing-targets"}) {
    argv.emplace_back(a);
  }
  int code = RunBounded(argv, log, timeout_s);
  std::string output = ReadAll(log);
  EXPECT_GE(code, 0) << "harness did not finish in time:\n" << output;
  json s = json::parse(ReadAll(out + "/summary.json"), nullptr, false);
  EXPECT_TRUE(s.is_object()) << output;
  if (!s.is_object()) {
    std::cerr << KeptLogTails(out + "/work/logs");
    return json::object();
  }
  EXPECT_EQ(code, 0) << output;
  EXPECT_EQ(s["cycles"], cycles);
  const json& t = s["targets"];
  EXPECT_EQ(t["acknowledgedUpdatesLost"]["value"], 0) << output;
  EXPECT_GT(s.value("acknowledgedUpdates", 0), cycles) << output;
  EXPECT_EQ(s.value("periodS", 0), 300);
  EXPECT_EQ(s.value("durability", ""), "sync");
  EXPECT_EQ(s.value("precompactionEvery", -1), 0);
  EXPECT_EQ(t["confirmedCheckpointsLost"]["value"], 0) << output;
  EXPECT_EQ(t["sideEffectsDuringReplay"]["value"], 0) << output;
  EXPECT_EQ(t["unattributedAppMessages"]["value"], 0) << output;
  EXPECT_EQ(t["restoresOutsideSla"]["value"], 0) << output;
  EXPECT_EQ(t["preShutdownNotDurable"]["value"], 0) << output;
  EXPECT_EQ(t["consumerChangedByRestore"]["value"], 0) << output;
  EXPECT_EQ(t["agentNotResumedFromRestore"]["value"], 0) << output;
  EXPECT_EQ(t["cyclesWithAnomalies"]["value"], 0) << output;
  EXPECT_TRUE(s["finalStoreCheck"].value("pass", false)) << s["finalStoreCheck"].dump();
  // The write calls, counted by the sink the harness owns: nothing executed twice, a completed
  // key never again, every call cut after its begin back as OUTCOME_UNKNOWN.
  EXPECT_EQ(t["duplicateExecutions"]["value"], 0) << output;
  EXPECT_EQ(t["completedKeysReexecuted"]["value"], 0) << output;
  EXPECT_EQ(t["endedWithoutOutcomeUnknown"]["value"], 0) << output;
  const json& ledger = s["ledger"];
  int injected = 0;
  for (const auto& [point, n] : ledger["injectedCrashes"].items()) injected += n.get<int>();
  EXPECT_GE(injected, cycles / 4) << ledger.dump();
  EXPECT_GT(ledger.value("sinkExecutions", 0), 0) << ledger.dump();
  EXPECT_GT(s["sidecarRecoveryMs"].value("n", 0), 0);
  if (::testing::Test::HasFailure()) std::cerr << KeptLogTails(out + "/work/logs");
  return s;
}

TEST(ChaosRecoveryTest, TwentyMixedCrashCyclesKeepEveryCorrectnessTarget) {
  json s = RunAndCheckCorrectness({"--mode", "mixed", "--store", "sqlite", "--seed", "20261122"},
                                  20, 200);
  // The run exercised what it claims: both signals, agent crashes, checkpoints, restores.
  EXPECT_GT(s.value("sigtermCycles", 0), 0);
  EXPECT_GT(s.value("agentCrashes", 0), 0);
  // Fewer than one per cycle: an agent that crashes itself right after the feed makes no phase
  // change in its cycle.
  EXPECT_GE(s.value("checkpointsCreated", 0), 5);
  EXPECT_EQ(s.value("preShutdownDurable", -1), s.value("sigtermCycles", -2));
}

TEST(ChaosRecoveryTest, TenSigkillCyclesOnTheFirestoreEmulatorWithFaults) {
  json s = RunAndCheckCorrectness(
      {"--mode", "sigkill", "--store", "firestore", "--faults", "--seed", "20261124"}, 10, 200);
  EXPECT_GT(s.value("agentCrashes", 0), 0);
  EXPECT_GE(s.value("checkpointsCreated", 0), 2);  // fewer than one per cycle, as above
  EXPECT_TRUE(s.value("faults", false));
}

TEST(ChaosRecoveryTest, TwelveSigkillCyclesOnAThreeNodeJetStreamClusterWithNodeKills) {
  json s = RunAndCheckCorrectness(
      {"--mode", "sigkill", "--store", "jetstream", "--seed", "20261126"}, 12, 200);
  EXPECT_EQ(s.value("store", ""), "jetstream");
  EXPECT_GT(s.value("agentCrashes", 0), 0);
  EXPECT_GE(s.value("checkpointsCreated", 0), 2);  // fewer than one per cycle, as above
  // The nats-server kills happened, one at a time, with the quorum kept: every third of them
  // the leader of the agent-record stream; each server came back and the streams and the inbox
  // consumer had their three replicas again before the next kill and at the end.
  const json& kills = s["nodeKills"];
  EXPECT_GE(kills.value("total", 0), 3) << kills.dump();
  EXPECT_GE(kills.value("targetedLeader", 0), 1) << kills.dump();
  EXPECT_EQ(kills.value("healthWaitsFailed", -1), 0) << kills.dump();
  EXPECT_EQ(kills.value("stillDown", -1), 0) << kills.dump();
  EXPECT_EQ(kills.value("healAtEnd", ""), "ok") << kills.dump();
  // Restores ran both with a server down and with all three up.
  const json& by_nodes = s["recoveryByNodesDown"];
  EXPECT_GT(by_nodes["oneNodeDown"].value("cycles", 0), 0) << by_nodes.dump();
  EXPECT_GT(by_nodes["allUp"].value("cycles", 0), 0) << by_nodes.dump();
}

}  // namespace
}  // namespace agentckpt::testing
