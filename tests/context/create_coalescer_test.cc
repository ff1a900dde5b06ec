#include "context/create_coalescer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "common/fake_env.h"

namespace agentckpt {
namespace {

using nlohmann::json;

// A write that blocks until released, so requests arrive while it is in flight.
struct GatedWrite {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int calls = 0;
  std::vector<TriggerReason> triggers;
  json operator()(TriggerReason t, const std::string&) {
    std::unique_lock<std::mutex> lock(mu);
    ++calls;
    triggers.push_back(t);
    cv.notify_all();
    cv.wait(lock, [this] { return open; });
    return {{"checkpointId", "cp-" + std::to_string(calls)}, {"sequenceNumber", calls}};
  }
  void WaitCalls(int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return calls >= n; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
};

struct Collected {
  std::mutex mu;
  std::vector<json> bodies;
  void Add(const json& b) {
    std::lock_guard<std::mutex> lock(mu);
    bodies.push_back(b);
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return bodies.size();
  }
};

TEST(TokenBucketTest, AdmitsBurstThenRate) {
  FakeEnv env;
  TokenBucket bucket(&env, 10, 3);
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_FALSE(bucket.TryTake());
  env.AdvanceMicros(100'000);  // one token at 10/s
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_FALSE(bucket.TryTake());
  env.AdvanceMicros(10'000'000);  // refills to the burst, not beyond
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(bucket.TryTake());
  EXPECT_FALSE(bucket.TryTake());
}

TEST(CreateCoalescerTest, RequestsDuringAWriteShareOneNextWrite) {
  FakeEnv env;
  GatedWrite write;
  Collected replies;
  CoalescerOptions o;
  o.rate_per_s = 1;
  o.burst = 100;
  CreateCoalescer c(&env, std::ref(write), o);
  c.Submit(CreateRequest{}, [&](const json& b) { replies.Add(b); });
  write.WaitCalls(1);  // the first write is in flight
  for (int i = 0; i < 50; ++i) {
    CreateRequest r;
    if (i == 7) r.trigger = TriggerReason::kPreCompaction;
    c.Submit(r, [&](const json& b) { replies.Add(b); });
  }
  write.Open();
  for (int i = 0; i < 500 && replies.size() < 51; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(replies.size(), 51u);
  c.Stop();
  EXPECT_EQ(write.calls, 2);
  EXPECT_EQ(c.writes(), 2u);
  EXPECT_EQ(write.triggers[1], TriggerReason::kPreCompaction);
  int first = 0, second = 0;
  for (const json& b : replies.bodies) {
    if (b["checkpointId"] == "cp-1") {
      ++first;
      EXPECT_EQ(b["coalescedRequests"], 1);
    } else {
      ++second;
      EXPECT_EQ(b["checkpointId"], "cp-2");
      EXPECT_EQ(b["coalescedRequests"], 50);
    }
  }
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 50);
}

TEST(CreateCoalescerTest, BeyondTheBucketRepliesRateLimitedAtOnce) {
  FakeEnv env;
  GatedWrite write;
  Collected replies;
  CoalescerOptions o;
  o.rate_per_s = 5;
  o.burst = 3;
  CreateCoalescer c(&env, std::ref(write), o);
  for (int i = 0; i < 10; ++i) c.Submit(CreateRequest{}, [&](const json& b) { replies.Add(b); });
  // The 7 refused ones were answered synchronously, before any write finished.
  ASSERT_EQ(replies.size(), 7u);
  for (const json& b : replies.bodies) {
    EXPECT_EQ(b["error"]["code"], "RATE_LIMITED");
    EXPECT_EQ(b["error"]["message"].get<std::string>().rfind("rate_limited: ", 0), 0u);
  }
  EXPECT_EQ(c.rate_limited(), 7u);
  write.Open();
  for (int i = 0; i < 500 && replies.size() < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(replies.size(), 10u);
  c.Stop();
  EXPECT_LE(write.calls, 2);
}

TEST(CreateCoalescerTest, QueuedRepliesAreBoundedAndStopAnswersTheRest) {
  FakeEnv env;
  GatedWrite write;
  Collected replies;
  CoalescerOptions o;
  o.rate_per_s = 1;
  o.burst = 1000;
  o.max_waiters = 5;
  auto c = std::make_unique<CreateCoalescer>(&env, std::ref(write), o);
  c->Submit(CreateRequest{}, [&](const json& b) { replies.Add(b); });
  write.WaitCalls(1);
  for (int i = 0; i < 10; ++i) c->Submit(CreateRequest{}, [&](const json& b) { replies.Add(b); });
  EXPECT_EQ(replies.size(), 6u);  // 1 in flight + 4 pending fit; 6 refused
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    write.Open();
  });
  c->Stop();
  opener.join();
  EXPECT_EQ(replies.size(), 11u);  // every request answered exactly once
}

}  // namespace
}  // namespace agentckpt
