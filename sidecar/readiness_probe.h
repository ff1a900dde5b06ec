// ReadinessProbe: answers GET /readyz without ever waiting behind the store. The readiness check
// (store ping, writer gate, lease) runs on the probe's own thread when an answer is asked for;
// the caller waits for it at most `answer_wait_ms`, then gets the last answer it has. A check
// that has not returned for `stall_after_ms` makes the answer "not ready" with the reason until
// it returns. So a stalled store turns /readyz into a prompt 503, and never blocks it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/env.h"

namespace agentckpt {

struct ReadinessProbeOptions {
  int64_t answer_wait_ms = 50;    // how long Current() waits for a fresh check
  int64_t stall_after_ms = 2000;  // a check running longer than this is reported
};

class ReadinessProbe {
 public:
  // `check` returns {"ready": bool, ...details}; it may block (e.g. on the store). `env` is
  // borrowed: its monotonic clock measures how long a check has been running.
  ReadinessProbe(Env* env, std::function<nlohmann::json()> check, ReadinessProbeOptions options);
  // Stops the thread; a check stuck in the store is left to finish on its own.
  ~ReadinessProbe();

  // Asks for a check (unless one is running) and returns its answer if it comes within
  // answer_wait_ms; else the last answer, or {"ready": false, "reason"} when there is none yet
  // or the running check has taken more than stall_after_ms. Thread-safe; never blocks on the
  // check itself.
  nlohmann::json Current();

  struct State;  // the answers and the check in progress, shared with the thread

 private:
  Env* env_;
  ReadinessProbeOptions options_;
  std::shared_ptr<State> state_;
};

}  // namespace agentckpt
