// SideEffectJournal: the reference agent's record of everything it did, one JSON object per line,
// so that a harness can count, after any crash, which side effects were done twice and which
// work was done again. Each line carries "t" (wall-clock Unix milliseconds, fractional) and "pid",
// plus the caller's fields; lines with an idempotency key have "key".
//
// Line kinds ("k"): "start" (process start), "resume" (state restored, with the checkpoint used),
// "effect" (an external side effect, e.g. an inbox message handled: key "msg:<stream seq>"),
// "work" (one task step finished: key "step:<task>:<step>"), "stop" (clean exit on SIGTERM).
//
// JournalTail reads a journal that another process is appending to.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace reference_agent {

class SideEffectJournal {
 public:
  // Opens (creating if needed) `path` for appending. kUnavailable if it cannot.
  static agentckpt::StatusOr<std::unique_ptr<SideEffectJournal>> Open(const std::string& path);
  ~SideEffectJournal();
  SideEffectJournal(const SideEffectJournal&) = delete;
  SideEffectJournal& operator=(const SideEffectJournal&) = delete;

  // Adds "t" and "pid" to `line`, writes it with a single write(2) and fdatasync()s before
  // returning, so a line that was returned from survives SIGKILL. kUnavailable on I/O errors.
  // Not thread-safe (the agent is single-threaded).
  agentckpt::Status Append(nlohmann::json line);

 private:
  explicit SideEffectJournal(int fd) : fd_(fd) {}
  int fd_;
};

// Wall-clock Unix time in milliseconds with microsecond resolution, the journal's "t".
double WallMillis();

class JournalTail {
 public:
  explicit JournalTail(std::string path) : path_(std::move(path)) {}
  // The complete lines appended since the last call, parsed (a line that is not JSON is
  // skipped; a partial last line is kept for the next call). A missing file reads as empty.
  std::vector<nlohmann::json> ReadNew();

 private:
  std::string path_;
  uint64_t offset_ = 0;
  std::string partial_;
};

}  // namespace reference_agent
