#include "sidecar/retention_sweeper.h"

#include <algorithm>
#include <chrono>

#include "observability/json_log.h"

namespace agentckpt {

namespace {
constexpr int64_t kPollMs = 60'000;  // how often the thread asks whether a sweep is due
}  // namespace

RetentionSweeper::RetentionSweeper(Env* env, CheckpointStore* store,
                                   RetentionSweeperOptions options)
    : env_(env), store_(store), options_(std::move(options)) {}

RetentionSweeper::~RetentionSweeper() { Stop(); }

StatusOr<int> RetentionSweeper::SweepIfDue() {
  std::lock_guard<std::mutex> lock(sweep_mu_);
  const int64_t now_micros = env_->NowMonotonicMicros();
  if (swept_once_ && now_micros < next_due_micros_) return 0;
  if (options_.may_sweep && !options_.may_sweep()) return 0;
  swept_once_ = true;
  next_due_micros_ = now_micros + options_.interval_ms * 1000;
  StatusOr<int> deleted = store_->DeleteExpired(env_->NowUnixMillis());
  if (deleted.ok() && options_.on_swept) options_.on_swept(*deleted);
  return deleted;
}

void RetentionSweeper::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      lock.unlock();
      StatusOr<int> deleted = SweepIfDue();
      if (!deleted.ok()) {
        LogWarn("cannot delete expired checkpoints; retried at the next sweep",
                {{"reason", deleted.status().ToString()}});
      } else if (*deleted > 0) {
        LogInfo("expired checkpoints deleted (CKPT_TTL_DAYS)", {{"deleted", *deleted}});
      }
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(std::min(kPollMs, options_.interval_ms)),
                   [this] { return stopping_; });
    }
  });
}

void RetentionSweeper::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace agentckpt
