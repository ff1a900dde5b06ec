// LeaseKeeper on a real SQLite store: the holder id, and the takeover of a lease whose holder is
// a process of this host that no longer runs.
#include "sidecar/lease_keeper.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace
}  // namespace agentckpt
