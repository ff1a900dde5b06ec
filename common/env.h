// Env: the seam between agentckpt and the operating system for time, randomness and files,
// so that tests can control them (a FakeEnv advances time by hand; no sleeps in tests).
//
// Env::Default() is the real one: CLOCK_REALTIME/CLOCK_MONOTONIC, OpenSSL's RAND_bytes, and
// POSIX files. All methods of the default Env are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace agentckpt {

class Env {
 public:
  virtual ~Env() = default;

  // The process-wide real Env. Never null, never destroyed.
  static Env* Default();

  // Wall-clock time, milliseconds since the Unix epoch (UTC). Used for document timestamps.
  virtual int64_t NowUnixMillis() = 0;
  // A monotonic clock in microseconds, for durations and deadlines. Arbitrary origin.
  virtual int64_t NowMonotonicMicros() = 0;
  // Blocks the calling thread for `micros` (a fake Env advances its clock instead).
  virtual void SleepForMicros(int64_t micros) = 0;
  // Fills `out` with `n` cryptographically strong random bytes. Returns kInternal if the
  // random source fails.
  virtual Status RandomBytes(uint8_t* out, size_t n) = 0;

  // Reads a whole file. kNotFound if missing, kUnavailable on other I/O errors.
  virtual StatusOr<std::string> ReadFile(const std::string& path) = 0;
  // Writes `data` to `path` atomically and durably (temp file, fsync, rename, fsync dir).
  // kUnavailable on I/O errors.
  virtual Status WriteFileAtomic(const std::string& path, std::string_view data) = 0;
  // True if `path` exists.
  virtual bool FileExists(const std::string& path) = 0;
};

}  // namespace agentckpt
