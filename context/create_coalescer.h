// CreateCoalescer: admission and coalescing of NATS checkpoint requests
// (agent.{agentId}.checkpoint.create), so a flood of requests never queues without bound.
//
// A token bucket (rate per second, burst) admits requests; a request beyond it is answered at
// once with {"error": {"code": "RATE_LIMITED", ...}}. Admitted requests never wait behind more
// than one write: while a checkpoint is being written, new requests join one pending batch,
// and the whole batch is served by the next single write; every requester of a batch gets the
// same reply (the created checkpoint plus "coalescedRequests": batch size). Submit never
// blocks on a write. Memory: at most `max_waiters` queued replies; beyond that, RATE_LIMITED.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/env.h"
#include "common/status.h"
#include "context/create_request.h"

namespace agentckpt {

// A token bucket on Env's monotonic clock. Thread-safe.
class TokenBucket {
 public:
  TokenBucket(Env* env, double rate_per_s, double burst);
  // Takes one token if there is one.
  bool TryTake();

 private:
  Env* env_;
  double rate_per_us_;
  double burst_;
  std::mutex mu_;
  double tokens_;
  int64_t last_us_;
};

struct CoalescerOptions {
  int rate_per_s = 10;
  int burst = 20;
  size_t max_waiters = 1000;
};

class CreateCoalescer {
 public:
  // Writes one checkpoint; returns the reply body (the created JSON or an error body).
  using WriteFn = std::function<nlohmann::json(TriggerReason trigger, const std::string& task_id)>;
  using ReplyFn = std::function<void(const nlohmann::json& body)>;

  CreateCoalescer(Env* env, WriteFn write, CoalescerOptions options);
  ~CreateCoalescer();  // Stop()

  // Admits (or rate-limits) one request and returns at once; `reply` is called exactly once,
  // on this thread (rate-limited) or on the coalescer's thread (after the write).
  void Submit(const CreateRequest& request, ReplyFn reply);

  // Answers every queued request with UNAVAILABLE and joins the thread. Idempotent.
  void Stop();

  uint64_t writes() const;        // checkpoint writes made
  uint64_t rate_limited() const;  // requests refused

 private:
  struct Waiter {
    CreateRequest request;
    ReplyFn reply;
  };
  void Loop();

  WriteFn write_;
  CoalescerOptions options_;
  TokenBucket bucket_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<Waiter> pending_;  // the next batch; the batch in flight is owned by Loop
  size_t in_flight_ = 0;
  uint64_t writes_ = 0;
  uint64_t rate_limited_ = 0;
  std::thread thread_;
};

}  // namespace agentckpt
