// RetentionSweeper: enforces CKPT_TTL_DAYS in the store. Every checkpoint carries an expireAt
// (its timestamp plus the TTL); the sweeper deletes those past it with
// CheckpointStore::DeleteExpired, whose contract also covers whatever else a backend keeps with
// them for an agent (e.g. journal entries). The first sweep runs when the sidecar starts, then one
// every interval, while `may_sweep` says so (the sidecar: while it holds the writer lease).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "common/env.h"
#include "common/status.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

struct RetentionSweeperOptions {
  int64_t interval_ms = 3'600'000;  // CKPT_TTL_SWEEP_S
  // Asked before each sweep; empty: always.
  std::function<bool()> may_sweep;
  // Told how many checkpoints each sweep deleted (e.g. a metric); may be empty.
  std::function<void(int deleted)> on_swept;
};

class RetentionSweeper {
 public:
  // `env` and `store` are borrowed and must outlive the sweeper.
  RetentionSweeper(Env* env, CheckpointStore* store, RetentionSweeperOptions options);
  ~RetentionSweeper();  // Stop()

  // Sweeps when one is due by the Env's monotonic clock (the first call always is, unless
  // may_sweep says no; then every interval_ms after the previous sweep): deletes every
  // checkpoint whose expireAt is at or before the Env's wall clock. Returns how many were
  // deleted (0 when no sweep was due), or the store's error (the next sweep is then due after
  // the interval as well: a failing store is not hammered). Thread-safe (calls are serialised).
  StatusOr<int> SweepIfDue();

  // Starts a thread that calls SweepIfDue at once and then about every minute (at most every
  // interval) until Stop(), logging what each sweep deleted and any failure. Idempotent.
  void Start();
  // Stops and joins the thread. Idempotent.
  void Stop();

 private:
  Env* env_;
  CheckpointStore* store_;
  RetentionSweeperOptions options_;
  std::mutex sweep_mu_;
  bool swept_once_ = false;
  int64_t next_due_micros_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace agentckpt
