// ReadinessProbe with a fake clock: /readyz's answer never waits on a check that is stuck (e.g.
// in a stalled store), and says so once it has been stuck too long.
#include "sidecar/readiness_probe.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "common/fake_env.h"

namespace agentckpt {
namespace {

// A check that answers {"ready": true, "n": calls} at once, or blocks while `blocked`.
struct Check {
  std::mutex mu;
  std::condition_variable cv;
  bool blocked = false;
  int calls = 0;
  nlohmann::json operator()() {
    std::unique_lock<std::mutex> lock(mu);
    ++calls;
    cv.wait(lock, [&] { return !blocked; });
    return {{"ready", true}, {"n", calls}};
  }
  void Block(bool b) {
    std::lock_guard<std::mutex> lock(mu);
    blocked = b;
    cv.notify_all();
  }
};

TEST(ReadinessProbeTest, AnswersFreshlyAndNeverWaitsOnAStuckCheck) {
  FakeEnv env;
  Check check;
  ReadinessProbeOptions o;
  o.answer_wait_ms = 3000;  // a free check answers long before this; a stuck one costs this
  o.stall_after_ms = 2000;  // on the fake clock
  ReadinessProbe probe(
      &env, [&] { return check(); }, o);
  nlohmann::json first = probe.Current();
  EXPECT_EQ(first["ready"], true);
  EXPECT_EQ(first["n"], 1);

  // The next check gets stuck: the last answer comes back (after answer_wait_ms)...
  check.Block(true);
  nlohmann::json during = probe.Current();
  EXPECT_EQ(during["ready"], true) << "a check stuck for less than 2 s is not reported";
  EXPECT_EQ(during["n"], 1);
  // ... until it has run for more than stall_after_ms: then not ready, with the reason.
  env.AdvanceMicros(2001 * 1000);
  nlohmann::json stalled = probe.Current();
  EXPECT_EQ(stalled["ready"], false);
  EXPECT_NE(stalled["reason"].get<std::string>().find("stalled"), std::string::npos)
      << stalled.dump();
  // When it returns, its answer is the next one.
  check.Block(false);
  nlohmann::json after = probe.Current();
  EXPECT_EQ(after["ready"], true);
  EXPECT_GE(after["n"], 2);
}

}  // namespace
}  // namespace agentckpt
