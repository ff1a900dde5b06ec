// ProbeLog: what the reference agent tells the crash harness, one JSON object per line, so the
// harness can check after any crash that nothing acknowledged was lost and count the work done
// again. The agent never reads it back and decides nothing by it: what it did and what it must
// not do twice it learns from the sidecar (its live context and the tool-call ledger) and, for
// a call whose outcome is unknown, from the system the call went to. Each line carries "t"
// (wall-clock Unix milliseconds, fractional) and "pid", plus the caller's fields.
//
// Line kinds ("k"): "start" (process start), "resume" (state restored, with the checkpoint used),
// "work" (one task step finished: key "step:<task>:<step>"), "ack" (an update the sidecar
// answered 2xx, with its journalSequence), "ended" (a write call whose end the ledger
// acknowledged: key), "acked" (an inbox message whose ack the server confirmed: key, seq, the
// stream sequence), "unknown" (a begin answered OUTCOME_UNKNOWN: key, and what the target
// system said), "crash" (the agent is about to SIGKILL itself at an injected point: key, point),
// "stop" (clean exit on SIGTERM).
//
// ProbeLogTail reads a log that another process is appending to.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace reference_agent {

class ProbeLog {
 public:
  // Opens (creating if needed) `path` for appending. kUnavailable if it cannot.
  static agentckpt::StatusOr<std::unique_ptr<ProbeLog>> Open(const std::string& path);
  ~ProbeLog();
  ProbeLog(const ProbeLog&) = delete;
  ProbeLog& operator=(const ProbeLog&) = delete;

  // Adds "t" and "pid" to `line`, writes it with a single write(2) and fdatasync()s before
  // returning, so a line that was returned from survives SIGKILL. kUnavailable on I/O errors.
  // Not thread-safe (the agent is single-threaded).
  agentckpt::Status Append(nlohmann::json line);

 private:
  explicit ProbeLog(int fd) : fd_(fd) {}
  int fd_;
};

// Wall-clock Unix time in milliseconds with microsecond resolution, the journal's "t".
double WallMillis();

class ProbeLogTail {
 public:
  explicit ProbeLogTail(std::string path) : path_(std::move(path)) {}
  // The complete lines appended since the last call, parsed (a line that is not JSON is
  // skipped; a partial last line is kept for the next call). A missing file reads as empty.
  std::vector<nlohmann::json> ReadNew();

 private:
  std::string path_;
  uint64_t offset_ = 0;
  std::string partial_;
};

}  // namespace reference_agent
