// Two real `agentckpt run` processes for the same agent on the same SQLite file: one writer at
// a time (the writer lease), standby, takeover after SIGTERM / SIGKILL, and a resurrected old
// writer (SIGSTOP / SIGCONT) fenced on its next put.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "common/env.h"
#include "tests/firestore/emulator_process.h"
#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

// Runs on the SQLite file of SidecarEnvTest, or (firestore_ = true) on a Firestore emulator.
class SidecarLeaseTest : public SidecarEnvTest {
 protected:
  void SetUp() override {
    SidecarEnvTest::SetUp();
    if (!firestore_) return;
    emulator_ = std::make_unique<EmulatorProcess>();
    Status s = emulator_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void TearDown() override {
    emulator_.reset();
    SidecarEnvTest::TearDown();
  }

  // The store settings of both sidecars, plus `extra`.
  std::map<std::string, std::string> StoreEnv(std::map<std::string, std::string> extra) const {
    if (firestore_) {
      extra["CKPT_STORE"] = "firestore://projects/lease-test/databases/(default)";
      extra["FIRESTORE_EMULATOR_HOST"] = emulator_->host_port();
    }
    return extra;
  }
  std::unique_ptr<CheckpointStore> Store() const {
    if (firestore_) return OpenEmulatorStore(emulator_->host_port(), "lease-test");
    return OpenTestStore();
  }
  std::unique_ptr<SidecarProcess> StartFirst(const std::string& ttl_s,
                                             std::map<std::string, std::string> extra = {}) {
    extra["CKPT_LEASE_TTL_S"] = ttl_s;
    return StartSidecar(StoreEnv(std::move(extra)));
  }

  // A second sidecar for the same agent and store, on its own port and output directory.
  std::unique_ptr<SidecarProcess> StartSecond(int port, const std::string& ttl_s,
                                              std::map<std::string, std::string> extra = {}) {
    std::string dir = dir_.path() + "/second";
    std::filesystem::create_directories(dir);
    extra["CKPT_HTTP_ADDR"] = "127.0.0.1:" + std::to_string(port);
    extra["CKPT_LEASE_TTL_S"] = ttl_s;
    auto env = SidecarEnv(StoreEnv(std::move(extra)));
    auto p = std::make_unique<SidecarProcess>(env, dir);
    EXPECT_TRUE(p->WaitHealthy(port)) << p->Describe();
    return p;
  }

  // Polls GET /readyz on `port` until its status is `want` (bounded).
  static HttpReply WaitReady(int port, int want, int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    HttpReply r;
    do {
      r = HttpCall(port, "GET", "/readyz");
      if (r.status == want) return r;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < deadline);
    return r;
  }

  void RunSecondStandsByAndTakesOverPromptlyAfterSigterm();
  void RunSecondTakesOverAfterExpiryWhenTheFirstIsKilled();
  void RunRestartedSidecarTakesOverAtOnceFromItsDeadPredecessor();
  void RunTwoStartedAtOnceExactlyOneWrites();
  void RunResurrectedOldWriterIsFencedAndStopsWriting();
  bool firestore_ = false;
  std::unique_ptr<EmulatorProcess> emulator_;

  static int Checkpoint(int port) {
    return HttpCall(port, "POST", "/v1/checkpoints", R"({"trigger":"manual"})").status;
  }

  // The stored sequence numbers are 1..n without a gap.
  void ExpectContiguous(size_t n) {
    auto listed = Store()->List(kProcAgent, 1000);
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    const auto& list = *listed;
    ASSERT_EQ(list.size(), n);
    for (size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ(list[i].sequence_number, static_cast<int64_t>(n - i));
    }
  }
};

void SidecarLeaseTest::RunSecondStandsByAndTakesOverPromptlyAfterSigterm() {
  auto first = StartFirst("60");
  ASSERT_EQ(WaitReady(port_, 200, 15000).status, 200) << first->Describe();
  {
    auto agent = Store()->GetAgent(kProcAgent);
    ASSERT_TRUE(agent.ok()) << agent.status().ToString();
    ASSERT_EQ(agent->lease_epoch, 1) << first->Describe();
  }
  int port2 = PickFreePort();
  auto second = StartSecond(port2, "60");
  HttpReply standby = WaitReady(port2, 503, 15000);
  ASSERT_EQ(standby.status, 503) << standby.body << second->Describe();
  EXPECT_NE(standby.body.find("standby: lease held by"), std::string::npos) << standby.body;

  EXPECT_EQ(Checkpoint(port_), 201);
  auto refused = HttpCall(port2, "POST", "/v1/checkpoints", R"({"trigger":"manual"})");
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_NE(refused.body.find("standby"), std::string::npos) << refused.body;

  // Graceful stop: pre_shutdown checkpoint, then release; the standby takes over long before
  // the 60 s ttl (within a third of it, even for a sanitizer build on a busy machine).
  EXPECT_EQ(first->Signal(SIGTERM), 0) << first->Describe();
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(WaitReady(port2, 200, 20000).status, 200) << second->Describe();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  EXPECT_EQ(Checkpoint(port2), 201) << second->Describe();
  ExpectContiguous(3);  // manual, pre_shutdown, manual
  auto agent = Store()->GetAgent(kProcAgent);
  ASSERT_TRUE(agent.ok());
  EXPECT_EQ(agent->lease_epoch, 2);
  EXPECT_EQ(second->Signal(SIGTERM), 0) << second->Describe();
}

void SidecarLeaseTest::RunSecondTakesOverAfterExpiryWhenTheFirstIsKilled() {
  // Two pods: the second cannot tell whether the first still runs, so it waits for expiry.
  auto first = StartFirst("2", {{"POD_NAME", "pod-a"}});
  ASSERT_EQ(WaitReady(port_, 200, 15000).status, 200) << first->Describe();
  EXPECT_EQ(Checkpoint(port_), 201);
  int port2 = PickFreePort();
  auto second = StartSecond(port2, "2", {{"POD_NAME", "pod-b"}});
  ASSERT_EQ(WaitReady(port2, 503, 15000).status, 503) << second->Describe();
  first->Kill();  // SIGKILL: no release; the lease must expire
  ASSERT_EQ(WaitReady(port2, 200, 15000).status, 200) << second->Describe();
  EXPECT_EQ(Checkpoint(port2), 201);
  ExpectContiguous(2);
  auto agent = Store()->GetAgent(kProcAgent);
  ASSERT_TRUE(agent.ok());
  EXPECT_EQ(agent->lease_epoch, 2);
  EXPECT_EQ(agent->lease_holder.rfind("pod-b/", 0), 0u) << agent->lease_holder;
  EXPECT_EQ(second->Signal(SIGTERM), 0) << second->Describe();
}

void SidecarLeaseTest::RunRestartedSidecarTakesOverAtOnceFromItsDeadPredecessor() {
  // The same pod after a crash: the dead predecessor's 60 s lease must not hold recovery up.
  auto first = StartFirst("60", {{"POD_NAME", "pod-a"}});
  ASSERT_EQ(WaitReady(port_, 200, 15000).status, 200) << first->Describe();
  EXPECT_EQ(Checkpoint(port_), 201);
  first->Kill();  // SIGKILL and reaped: the holder pod-a/PID no longer runs
  int port2 = PickFreePort();
  auto restarted = StartSecond(port2, "60", {{"POD_NAME", "pod-a"}});
  ASSERT_EQ(WaitReady(port2, 200, 20000).status, 200) << restarted->Describe();
  EXPECT_EQ(Checkpoint(port2), 201);
  EXPECT_NE(restarted->Stdout().find("took over the writer lease"), std::string::npos)
      << restarted->Stdout();
  ExpectContiguous(2);
  auto agent = Store()->GetAgent(kProcAgent);
  ASSERT_TRUE(agent.ok());
  EXPECT_EQ(agent->lease_epoch, 2);  // the dead holder is fenced all the same
  EXPECT_EQ(restarted->Signal(SIGTERM), 0) << restarted->Describe();
}

void SidecarLeaseTest::RunTwoStartedAtOnceExactlyOneWrites() {
  // Both processes are spawned before either is waited for, so their acquisitions race. Rounds
  // reuse the store: each round's pair races for a lease released by the previous winner.
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::string dir_a = dir_.path() + "/race-a-" + std::to_string(round);
    std::string dir_b = dir_.path() + "/race-b-" + std::to_string(round);
    std::filesystem::create_directories(dir_a);
    std::filesystem::create_directories(dir_b);
    int port_a = PickFreePort();
    int port_b = PickFreePort();
    auto env_a = SidecarEnv(StoreEnv(
        {{"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(port_a)}, {"POD_NAME", "pod-a"}}));
    auto env_b = SidecarEnv(StoreEnv(
        {{"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(port_b)}, {"POD_NAME", "pod-b"}}));
    auto a = std::make_unique<SidecarProcess>(env_a, dir_a);
    auto b = std::make_unique<SidecarProcess>(env_b, dir_b);
    ASSERT_TRUE(a->WaitHealthy(port_a)) << a->Describe();
    ASSERT_TRUE(b->WaitHealthy(port_b)) << b->Describe();
    // Each settles in held (200) or standby (503); exactly one is held.
    int ready_a = 0, ready_b = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    do {
      ready_a = HttpCall(port_a, "GET", "/readyz").status;
      ready_b = HttpCall(port_b, "GET", "/readyz").status;
      if ((ready_a == 200) != (ready_b == 200) && (ready_a == 503 || ready_b == 503)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < deadline);
    ASSERT_TRUE((ready_a == 200 && ready_b == 503) || (ready_a == 503 && ready_b == 200))
        << "readyz " << ready_a << " / " << ready_b;
    SidecarProcess* winner = ready_a == 200 ? a.get() : b.get();
    const int winner_port = ready_a == 200 ? port_a : port_b;
    const int loser_port = ready_a == 200 ? port_b : port_a;
    EXPECT_EQ(Checkpoint(winner_port), 201) << winner->Stdout();
    EXPECT_EQ(Checkpoint(loser_port), 503);
    ExpectContiguous(static_cast<size_t>(2 * round + 1));
    auto agent = Store()->GetAgent(kProcAgent);
    ASSERT_TRUE(agent.ok()) << agent.status().ToString();
    EXPECT_EQ(agent->lease_epoch, 2 * round + 1);
    // The winner stops gracefully (pre_shutdown checkpoint, release); the other takes over.
    EXPECT_EQ(winner->Signal(SIGTERM), 0) << winner->Stderr();
    ASSERT_EQ(WaitReady(loser_port, 200, 10000).status, 200);
    SidecarProcess* other = winner == a.get() ? b.get() : a.get();
    // ... and it stops without writing: the next round starts from a released lease.
    other->Kill();
    auto released = Store()->GetAgent(kProcAgent);
    ASSERT_TRUE(released.ok());
    ASSERT_TRUE(Store()
                    ->ReleaseLease(kProcAgent,
                                   LeaseToken{released->lease_holder, released->lease_epoch},
                                   Env::Default()->NowUnixMillis())
                    .ok());
    EXPECT_EQ(released->lease_epoch, 2 * round + 2);
  }
}

void SidecarLeaseTest::RunResurrectedOldWriterIsFencedAndStopsWriting() {
  auto first = StartFirst("2");
  ASSERT_EQ(WaitReady(port_, 200, 15000).status, 200) << first->Describe();
  EXPECT_EQ(Checkpoint(port_), 201);
  int port2 = PickFreePort();
  auto second = StartSecond(port2, "2");
  ASSERT_EQ(WaitReady(port2, 503, 15000).status, 503) << second->Describe();

  ASSERT_EQ(::kill(first->pid(), SIGSTOP), 0);
  ASSERT_EQ(WaitReady(port2, 200, 15000).status, 200) << second->Describe();
  EXPECT_EQ(Checkpoint(port2), 201);
  ASSERT_EQ(::kill(first->pid(), SIGCONT), 0);

  // The old writer's next put (or its next renewal) finds the lease taken over.
  auto stale = HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"manual"})");
  EXPECT_EQ(stale.status, 503) << stale.body;
  EXPECT_NE(stale.body.find("lease lost"), std::string::npos) << stale.body;
  bool failed_event = false;
  for (json e = NextEvent(3000); !e.is_null(); e = NextEvent(500)) {
    if (e.value("subject", "").find("checkpoint.failed") != std::string::npos &&
        e["data"].dump().find("lease lost") != std::string::npos) {
      failed_event = true;
    }
  }
  EXPECT_TRUE(failed_event);
  HttpReply ready = WaitReady(port_, 503, 15000);
  EXPECT_EQ(ready.status, 503);
  EXPECT_NE(ready.body.find("lease lost"), std::string::npos) << ready.body;
  // It never writes again; the new writer goes on without a gap.
  EXPECT_EQ(Checkpoint(port_), 503);
  EXPECT_EQ(Checkpoint(port2), 201);
  ExpectContiguous(3);
  // Its shutdown writes nothing either.
  EXPECT_EQ(first->Signal(SIGTERM), 0) << first->Describe();
  ExpectContiguous(3);
  EXPECT_EQ(second->Signal(SIGTERM), 0) << second->Describe();
  ExpectContiguous(4);
}

// The same races with both sidecars on the Firestore emulator.
class SidecarLeaseFirestoreTest : public SidecarLeaseTest {
 protected:
  SidecarLeaseFirestoreTest() { firestore_ = true; }
};

TEST_F(SidecarLeaseTest, SecondStandsByAndTakesOverPromptlyAfterSigterm) {
  RunSecondStandsByAndTakesOverPromptlyAfterSigterm();
}
TEST_F(SidecarLeaseFirestoreTest, SecondStandsByAndTakesOverPromptlyAfterSigterm) {
  RunSecondStandsByAndTakesOverPromptlyAfterSigterm();
}
TEST_F(SidecarLeaseTest, SecondTakesOverAfterExpiryWhenTheFirstIsKilled) {
  RunSecondTakesOverAfterExpiryWhenTheFirstIsKilled();
}
TEST_F(SidecarLeaseFirestoreTest, SecondTakesOverAfterExpiryWhenTheFirstIsKilled) {
  RunSecondTakesOverAfterExpiryWhenTheFirstIsKilled();
}
TEST_F(SidecarLeaseTest, RestartedSidecarTakesOverAtOnceFromItsDeadPredecessor) {
  RunRestartedSidecarTakesOverAtOnceFromItsDeadPredecessor();
}
TEST_F(SidecarLeaseFirestoreTest, RestartedSidecarTakesOverAtOnceFromItsDeadPredecessor) {
  RunRestartedSidecarTakesOverAtOnceFromItsDeadPredecessor();
}
TEST_F(SidecarLeaseTest, TwoStartedAtOnceExactlyOneWrites) {
  RunTwoStartedAtOnceExactlyOneWrites();
}
TEST_F(SidecarLeaseFirestoreTest, TwoStartedAtOnceExactlyOneWrites) {
  RunTwoStartedAtOnceExactlyOneWrites();
}
TEST_F(SidecarLeaseTest, ResurrectedOldWriterIsFencedAndStopsWriting) {
  RunResurrectedOldWriterIsFencedAndStopsWriting();
}
TEST_F(SidecarLeaseFirestoreTest, ResurrectedOldWriterIsFencedAndStopsWriting) {
  RunResurrectedOldWriterIsFencedAndStopsWriting();
}

}  // namespace
}  // namespace agentckpt::testing
