// PositionCache with a fake clock: a checkpoint takes a position read at most max_age before it
// (and asks for a fresh one for the next), or reads now.
#include "sidecar/position_cache.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/fake_env.h"

namespace agentckpt {
namespace {

// A reader whose n-th read returns ack floor n.
struct Reader {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t reads = 0;
  StatusOr<NatsPosition> operator()() {
    std::lock_guard<std::mutex> lock(mu);
    ++reads;
    cv.notify_all();
    NatsPosition p{"INBOX", "agent", reads, 0};
    return p;
  }
  bool WaitReads(uint64_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(30), [&] { return reads >= n; });
  }
};

TEST(PositionCacheTest, UsesAFreshPositionAndRefreshesItForTheNextCheckpoint) {
  FakeEnv env;
  Reader reader;
  PositionCache cache(
      &env, [&] { return reader(); }, PositionCacheOptions{250, 100});
  auto first = cache.Get();  // nothing cached: read now
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->last_acked_sequence, 1u);

  env.AdvanceMicros(50'000);  // 50 ms later: used as it is, no read asked for (younger than 100)
  auto young = cache.Get();
  ASSERT_TRUE(young.ok());
  EXPECT_EQ(young->last_acked_sequence, 1u);
  {
    std::lock_guard<std::mutex> lock(reader.mu);
    EXPECT_EQ(reader.reads, 1u);
  }

  env.AdvanceMicros(150'000);  // 200 ms: the cached one is used, a refresh is asked for
  auto second = cache.Get();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->last_acked_sequence, 1u);
  ASSERT_TRUE(reader.WaitReads(2));

  // The refresh started at 200 ms, so it is used until 450 ms once it is kept.
  bool kept = false;
  for (int i = 0; i < 100000 && !kept; ++i) {
    auto p = cache.Get();
    ASSERT_TRUE(p.ok());
    kept = p->last_acked_sequence >= 2;
    if (!kept) std::this_thread::yield();
  }
  EXPECT_TRUE(kept);
  env.AdvanceMicros(300'000);  // 500 ms: everything read so far is too old
  uint64_t before;
  {
    std::lock_guard<std::mutex> lock(reader.mu);
    before = reader.reads;
  }
  auto fourth = cache.Get();
  ASSERT_TRUE(fourth.ok());
  EXPECT_GT(fourth->last_acked_sequence, before);  // read now, after the clock moved
}

TEST(PositionCacheTest, AFailedReadIsReturnedWhenNothingFreshIsCached) {
  FakeEnv env;
  PositionCache cache(
      &env, [] { return StatusOr<NatsPosition>(UnavailableError("down")); },
      PositionCacheOptions{250});
  EXPECT_EQ(cache.Get().status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace agentckpt
