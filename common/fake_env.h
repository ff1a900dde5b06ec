// FakeEnv: an Env for tests. Time stands still until advanced (SleepForMicros advances it, so
// code that waits finishes at once); randomness is a seeded, reproducible stream; files are
// delegated to the real filesystem. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <random>

#include "common/env.h"

namespace agentckpt {

class FakeEnv final : public Env {
 public:
  explicit FakeEnv(int64_t start_unix_millis = 1793760300000, uint64_t seed = 42)
      : unix_millis_(start_unix_millis), rng_(seed) {}

  int64_t NowUnixMillis() override { return unix_millis_.load(); }
  int64_t NowMonotonicMicros() override { return mono_micros_.load(); }
  void SleepForMicros(int64_t micros) override { AdvanceMicros(micros); }
  Status RandomBytes(uint8_t* out, size_t n) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(rng_() & 0xff);
    return OkStatus();
  }
  StatusOr<std::string> ReadFile(const std::string& path) override {
    return Env::Default()->ReadFile(path);
  }
  Status WriteFileAtomic(const std::string& path, std::string_view data) override {
    return Env::Default()->WriteFileAtomic(path, data);
  }
  bool FileExists(const std::string& path) override { return Env::Default()->FileExists(path); }

  // Moves both clocks forward.
  void AdvanceMicros(int64_t micros) {
    mono_micros_ += micros;
    unix_millis_ += micros / 1000;
  }
  void SetUnixMillis(int64_t ms) { unix_millis_ = ms; }

 private:
  std::atomic<int64_t> unix_millis_;
  std::atomic<int64_t> mono_micros_{1'000'000};
  std::mutex mu_;
  std::mt19937_64 rng_;
};

}  // namespace agentckpt
