#include "sidecar/readiness_probe.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace agentckpt {

struct ReadinessProbe::State {
  std::mutex mu;
  std::condition_variable cv;
  std::function<nlohmann::json()> check;
  nlohmann::json last;                // null until a check returns
  uint64_t answers = 0;               // checks finished
  bool requested = false;             // a check is asked for
  int64_t running_since_micros = -1;  // monotonic start of the running check, -1 if none
  bool stopping = false;
};

ReadinessProbe::ReadinessProbe(Env* env, std::function<nlohmann::json()> check,
                               ReadinessProbeOptions options)
    : env_(env), options_(options), state_(std::make_shared<State>()) {
  state_->check = std::move(check);
  // The thread holds the state: it may outlive the probe while a check is stuck in the store.
  std::thread([state = state_, env] {
    std::unique_lock<std::mutex> lock(state->mu);
    while (true) {
      state->cv.wait(lock, [&] { return state->requested || state->stopping; });
      if (state->stopping) return;
      state->requested = false;
      state->running_since_micros = env->NowMonotonicMicros();
      lock.unlock();
      nlohmann::json answer = state->check();
      lock.lock();
      state->last = std::move(answer);
      state->running_since_micros = -1;
      ++state->answers;
      state->cv.notify_all();
    }
  }).detach();
}

ReadinessProbe::~ReadinessProbe() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
  }
  state_->cv.notify_all();
}

nlohmann::json ReadinessProbe::Current() {
  std::unique_lock<std::mutex> lock(state_->mu);
  const uint64_t before = state_->answers;
  if (state_->running_since_micros < 0) {
    state_->requested = true;
    state_->cv.notify_all();
  }
  // A fresh answer if it comes in time (from the check asked for here or the one running).
  state_->cv.wait_for(lock, std::chrono::milliseconds(options_.answer_wait_ms),
                      [&] { return state_->answers > before; });
  nlohmann::json out = state_->last.is_object() ? state_->last : nlohmann::json::object();
  if (state_->running_since_micros >= 0) {
    const int64_t running_ms = (env_->NowMonotonicMicros() - state_->running_since_micros) / 1000;
    if (running_ms > options_.stall_after_ms) {
      out["ready"] = false;
      out["reason"] = "the readiness check (store ping, writer, lease) has not returned for " +
                      std::to_string(running_ms) + " ms: the store is slow or stalled";
    } else if (!state_->last.is_object()) {
      out["ready"] = false;
      out["reason"] =
          "the first readiness check has been running for " + std::to_string(running_ms) + " ms";
    }
  }
  if (!out.contains("ready")) {
    out["ready"] = false;
    out["reason"] = "no readiness check has finished yet";
  }
  return out;
}

}  // namespace agentckpt
