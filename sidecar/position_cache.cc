#include "sidecar/position_cache.h"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

namespace agentckpt {

struct PositionCache::State {
  std::mutex mu;
  std::condition_variable cv;
  PositionReader read;
  std::optional<NatsPosition> position;
  int64_t read_at_micros = 0;  // when the read that gave `position` started
  bool refresh_requested = false;
  bool stopping = false;

  // Keeps `p` if its read started after the one of the position kept now.
  void Keep(const NatsPosition& p, int64_t started_micros) {
    if (position && started_micros <= read_at_micros) return;
    position = p;
    read_at_micros = started_micros;
  }
};

PositionCache::PositionCache(Env* env, PositionReader read, PositionCacheOptions options)
    : env_(env), options_(options), state_(std::make_shared<State>()) {
  state_->read = std::move(read);
  std::thread([state = state_, env] {
    std::unique_lock<std::mutex> lock(state->mu);
    while (true) {
      state->cv.wait(lock, [&] { return state->refresh_requested || state->stopping; });
      if (state->stopping) return;
      state->refresh_requested = false;
      const int64_t started = env->NowMonotonicMicros();
      lock.unlock();
      StatusOr<NatsPosition> p = state->read();
      lock.lock();
      if (p.ok()) state->Keep(*p, started);  // a failed read leaves the old one to age out
    }
  }).detach();
}

PositionCache::~PositionCache() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
  }
  state_->cv.notify_all();
}

StatusOr<NatsPosition> PositionCache::Get() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    const int64_t age_micros = env_->NowMonotonicMicros() - state_->read_at_micros;
    if (state_->position && age_micros <= options_.max_age_ms * 1000) {
      if (age_micros >= options_.refresh_after_ms * 1000) {
        state_->refresh_requested = true;  // a fresher one for the next checkpoint
        state_->cv.notify_all();
      }
      return *state_->position;
    }
  }
  const int64_t started = env_->NowMonotonicMicros();
  StatusOr<NatsPosition> p = state_->read();
  if (p.ok()) {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->Keep(*p, started);
  }
  return p;
}

}  // namespace agentckpt
