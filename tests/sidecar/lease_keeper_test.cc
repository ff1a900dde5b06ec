// LeaseKeeper on a real SQLite store: the holder id, and the takeover of a lease whose holder is
// a process of this host that no longer runs.
#include "sidecar/lease_keeper.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/env.h"
#include "common/fake_env.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

// The pid of a child that has exited and been reaped: no process has it (until reused).
pid_t ReapedPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

TEST(LeaseHolderIdTest, IsHostSlashPid) {
  std::string id = MakeLeaseHolderId();
  ASSERT_NE(id.rfind('/'), std::string::npos);
  EXPECT_EQ(id.substr(id.rfind('/') + 1), std::to_string(getpid()));
}

TEST(LeaseHolderIdTest, OnlyADeadProcessOfThisHostIsDead) {
  const std::string own = "pod-a/" + std::to_string(getpid());
  const std::string dead = "pod-a/" + std::to_string(ReapedPid());
  EXPECT_TRUE(IsDeadLocalHolder(dead, own));
  EXPECT_FALSE(IsDeadLocalHolder("pod-b/" + std::to_string(ReapedPid()), own));  // other pod
  EXPECT_FALSE(IsDeadLocalHolder("pod-a/" + std::to_string(getppid()), own));    // alive
  EXPECT_FALSE(IsDeadLocalHolder(own, own));                                     // ourselves
  EXPECT_FALSE(IsDeadLocalHolder("pod-a/1a2b3c4d", own));  // an older id format
  EXPECT_FALSE(IsDeadLocalHolder("pod-a/", own));
  EXPECT_FALSE(IsDeadLocalHolder("no-slash", own));
  EXPECT_FALSE(IsDeadLocalHolder("pod-a/99999999999999", own));
}

class LeaseKeeperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = SqliteStore::Open(dir_.path() + "/store.db");
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(*opened);
  }
  LeaseKeeperOptions Options(const std::string& holder, bool with_liveness) {
    LeaseKeeperOptions o;
    o.agent_id = "agent-l";
    o.holder = holder;
    o.ttl_ms = 60'000;
    if (with_liveness) {
      o.holder_is_dead = [holder](const std::string& h) { return IsDeadLocalHolder(h, holder); };
    }
    return o;
  }
  testing::TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(LeaseKeeperTest, TakesOverADeadLocalHoldersLeaseWithANewEpoch) {
  const std::string dead = "pod-a/" + std::to_string(ReapedPid());
  Env* env = Env::Default();
  auto first = store_->AcquireLease("agent-l", dead, 60'000, env->NowUnixMillis());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  LeaseKeeper keeper(env, store_.get(), Options("pod-a/" + std::to_string(getpid()), true));
  auto got = keeper.TryAcquire();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->epoch, first->epoch + 1);
  EXPECT_TRUE(keeper.held());
  // The dead holder's token is fenced.
  auto stale =
      store_->RenewLease("agent-l", LeaseToken{dead, first->epoch}, 60'000, env->NowUnixMillis());
  EXPECT_EQ(stale.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(LeaseKeeperTest, WaitsForALiveOrRemoteHolder) {
  Env* env = Env::Default();
  for (const std::string& holder :
       {"pod-a/" + std::to_string(getppid()), "pod-b/" + std::to_string(ReapedPid())}) {
    SCOPED_TRACE(holder);
    auto taken = store_->AcquireLease("agent-l", holder, 60'000, env->NowUnixMillis());
    ASSERT_TRUE(taken.ok()) << taken.status().ToString();
    LeaseKeeper keeper(env, store_.get(), Options("pod-a/" + std::to_string(getpid()), true));
    auto got = keeper.TryAcquire();
    EXPECT_EQ(got.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_FALSE(keeper.held());
    ASSERT_TRUE(
        store_->ReleaseLease("agent-l", LeaseToken{holder, taken->epoch}, env->NowUnixMillis())
            .ok());
  }
}

TEST_F(LeaseKeeperTest, WithoutALivenessCheckADeadHolderIsWaitedFor) {
  const std::string dead = "pod-a/" + std::to_string(ReapedPid());
  Env* env = Env::Default();
  ASSERT_TRUE(store_->AcquireLease("agent-l", dead, 60'000, env->NowUnixMillis()).ok());
  LeaseKeeper keeper(env, store_.get(), Options("pod-a/" + std::to_string(getpid()), false));
  EXPECT_EQ(keeper.TryAcquire().status().code(), StatusCode::kFailedPrecondition);
}

// ConfirmHeld answers from the clock while the last renewal is recent, asks the store once it
// is not, and says "lease lost" when another holder took the lease over meanwhile.
TEST_F(LeaseKeeperTest, ConfirmHeldRenewsOnlyPastItsWindowAndSeesATakeover) {
  FakeEnv env;
  LeaseKeeperOptions o = Options("pod-a/1", false);  // ttl 60 s: confirmed for 40 s
  LeaseKeeper keeper(&env, store_.get(), o);
  EXPECT_EQ(keeper.ConfirmHeld().code(), StatusCode::kFailedPrecondition);  // not held yet
  auto got = keeper.TryAcquire();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  env.AdvanceMicros(39'000'000);
  EXPECT_TRUE(keeper.ConfirmHeld().ok());
  auto record = store_->GetAgent("agent-l");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->lease_expires_at_ms, got->expires_at_ms);  // no store call
  env.AdvanceMicros(2'000'000);
  EXPECT_TRUE(keeper.ConfirmHeld().ok());
  record = store_->GetAgent("agent-l");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->lease_expires_at_ms, env.NowUnixMillis() + o.ttl_ms);  // renewed
  // Paused past the ttl: another sidecar takes the expired lease over.
  env.AdvanceMicros(61'000'000);
  auto other = store_->AcquireLease("agent-l", "pod-b/2", o.ttl_ms, env.NowUnixMillis());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  Status lost = keeper.ConfirmHeld();
  EXPECT_EQ(lost.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(lost.message().rfind("lease lost", 0), 0u) << lost.ToString();
}

// Until `on_acquired` stops answering kUnavailable the keeper keeps the lease, renews it on its
// usual schedule (time here is a fake clock the test moves), says why in the lease's detail and
// calls again; once it succeeds it is not called again.
TEST_F(LeaseKeeperTest, RetriesTakingUpTheWorkWhileRenewingTheLease) {
  FakeEnv env;
  LeaseKeeperOptions o = Options("pod-a/1", false);
  o.ttl_ms = 3'000;  // renewed every 1 s (the keeper's waits are real, its schedule fake)
  o.retry_ms = 10;
  LeaseKeeper keeper(&env, store_.get(), o);
  auto got = keeper.TryAcquire();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  bool store_answers = false;
  keeper.Start(
      [&](const Lease& lease) -> Status {
        EXPECT_EQ(lease.epoch, got->epoch);
        std::lock_guard<std::mutex> lock(mu);
        ++calls;
        cv.notify_all();
        return store_answers ? OkStatus() : UnavailableError("cannot read the checkpoint");
      },
      [](const Status&) { ADD_FAILURE() << "the lease was lost"; });
  // Bounded waits on the keeper's thread (real time only bounds them).
  auto wait_for = [&](auto done) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(30), [&] { return done(); });
  };
  auto renewed_at = [&](int64_t now_ms) {
    for (int i = 0; i < 3000; ++i) {
      auto record = store_->GetAgent("agent-l");
      if (record.ok() && record->lease_expires_at_ms == now_ms + o.ttl_ms) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  ASSERT_TRUE(wait_for([&] { return calls >= 3; }));
  EXPECT_EQ(keeper.Describe().value("detail", ""), "cannot read the checkpoint");
  EXPECT_EQ(keeper.Describe().value("state", ""), "held");
  // The renewal comes due while the work is still not taken up: it is made all the same.
  env.AdvanceMicros(1'100'000);
  EXPECT_TRUE(renewed_at(env.NowUnixMillis()));
  {
    std::lock_guard<std::mutex> lock(mu);
    store_answers = true;
  }
  bool detail_cleared = false;  // after the call that succeeds returns
  for (int i = 0; i < 3000 && !detail_cleared; ++i) {
    detail_cleared = !keeper.Describe().contains("detail");
    if (!detail_cleared) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(detail_cleared) << keeper.Describe().dump();
  int calls_when_done = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    calls_when_done = calls;
  }
  // Another renewal: the lease is still this keeper's, and the work is not taken up twice.
  env.AdvanceMicros(1'100'000);
  EXPECT_TRUE(renewed_at(env.NowUnixMillis()));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(calls, calls_when_done);
  EXPECT_EQ(
      store_->AcquireLease("agent-l", "pod-b/2", o.ttl_ms, env.NowUnixMillis()).status().code(),
      StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace agentckpt
