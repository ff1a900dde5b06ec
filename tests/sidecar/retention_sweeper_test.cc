// RetentionSweeper on a real SQLite store with a fake clock (Env): expired checkpoints are
// deleted on the sweep's schedule, and only those.
#include "sidecar/retention_sweeper.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "checkpoint/canonical.h"
#include "common/fake_env.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

constexpr int64_t kDayMs = 86'400'000;
constexpr int64_t kHourMicros = int64_t{3'600'000} * 1000;

class RetentionSweeperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenStore("sqlite://" + tmp_.File("store.db"));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  // Checkpoint `seq` of `agent`, written `days_ago` days before the fake clock's start with the
  // given TTL.
  void Put(const std::string& agent, int64_t seq, int64_t days_ago, int ttl_days) {
    Checkpoint cp = testing::MakeCheckpoint(agent, seq);
    cp.timestamp_ms = env_.NowUnixMillis() - days_ago * kDayMs + seq;
    cp.ttl_days = ttl_days;
    auto sealed = Seal(cp);
    ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
    ASSERT_TRUE(store_->Put(*sealed, PutOptions{1000}).ok());
  }
  std::vector<int64_t> Sequences(const std::string& agent) {
    std::vector<int64_t> out;
    auto list = store_->List(agent, 100);
    EXPECT_TRUE(list.ok());
    for (const CheckpointInfo& info : *list) out.push_back(info.sequence_number);
    return out;
  }

  testing::TempDir tmp_;
  FakeEnv env_;
  std::unique_ptr<CheckpointStore> store_;
};

TEST_F(RetentionSweeperTest, DeletesOnlyExpiredCheckpointsOnItsSchedule) {
  Put("agent-a", 1, 10, 7);  // expired 3 days ago
  Put("agent-a", 2, 6, 7);   // expires in a day
  Put("agent-a", 3, 1, 7);
  Put("agent-b", 1, 8, 7);  // another agent of the same store: expired too
  RetentionSweeperOptions o;
  o.interval_ms = 3'600'000;
  std::vector<int> swept;
  o.on_swept = [&](int n) { swept.push_back(n); };
  RetentionSweeper sweeper(&env_, store_.get(), o);

  auto first = sweeper.SweepIfDue();  // the first call always sweeps
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, 2);
  EXPECT_EQ(Sequences("agent-a"), (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(Sequences("agent-b").empty());

  // A day and a bit later checkpoint 2 has expired, but the next sweep is due only on the hour.
  env_.AdvanceMicros(kHourMicros - 1);
  env_.SetUnixMillis(env_.NowUnixMillis() + kDayMs);
  auto early = sweeper.SweepIfDue();
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(*early, 0);
  EXPECT_EQ(Sequences("agent-a"), (std::vector<int64_t>{3, 2}));
  env_.AdvanceMicros(1);
  auto due = sweeper.SweepIfDue();
  ASSERT_TRUE(due.ok());
  EXPECT_EQ(*due, 1);
  EXPECT_EQ(Sequences("agent-a"), (std::vector<int64_t>{3}));
  EXPECT_EQ(swept, (std::vector<int>{2, 1}));
}

TEST_F(RetentionSweeperTest, DoesNotSweepWhileNotAllowed) {
  Put("agent-a", 1, 10, 7);
  bool allowed = false;
  RetentionSweeperOptions o;
  o.may_sweep = [&] { return allowed; };
  RetentionSweeper sweeper(&env_, store_.get(), o);
  auto r = sweeper.SweepIfDue();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 0);
  EXPECT_EQ(Sequences("agent-a"), (std::vector<int64_t>{1}));
  allowed = true;  // e.g. the writer lease was taken: sweeps at once
  r = sweeper.SweepIfDue();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 1);
  EXPECT_TRUE(Sequences("agent-a").empty());
}

TEST_F(RetentionSweeperTest, ThreadSweepsAtStart) {
  Put("agent-a", 1, 10, 7);
  int sweeps = 0;
  std::mutex mu;
  std::condition_variable cv;
  RetentionSweeperOptions o;
  o.on_swept = [&](int) {
    std::lock_guard<std::mutex> lock(mu);
    ++sweeps;
    cv.notify_all();
  };
  RetentionSweeper sweeper(&env_, store_.get(), o);
  sweeper.Start();
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return sweeps > 0; }));
  }
  sweeper.Stop();
  EXPECT_TRUE(Sequences("agent-a").empty());
}

}  // namespace
}  // namespace agentckpt
