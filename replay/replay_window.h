// ReplayWindow: the pure bookkeeping of a replay, independent of NATS. Messages are fed oldest
// first; the window classifies each one as handled (at or below the consumer's ack floor) or
// pending, counts both, collects the distinct pending subjects, and keeps only the newest
// `max_messages` in a ring buffer, so memory stays bounded however long the stream is.
//
// Not thread-safe: one window belongs to one ReadSince call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "replay/replay_source.h"

namespace agentckpt {

// A prefix of `body` of at most `max_bytes` bytes that is well-formed UTF-8 and does not end
// inside a character: for well-formed input, the longest such prefix. A message body is
// untrusted and may not be text: if the kept part has ill-formed bytes, they are replaced by
// U+FFFD before the cut. Reads at most `max_bytes + 3` bytes of `body`.
std::string CutBodyToUtf8(std::string_view body, size_t max_bytes);

class ReplayWindow {
 public:
  // At most this many distinct pending subjects are kept (the count of pending messages is
  // always exact); a stream with millions of subjects must not blow memory.
  static constexpr size_t kMaxPendingSubjects = 256;

  // `ack_floor` is the consumer's current ack floor (stream sequence).
  ReplayWindow(uint64_t ack_floor, size_t max_messages, size_t max_body_bytes);

  // Records one message. Sequences must be strictly increasing across calls.
  void Add(uint64_t stream_sequence, std::string_view subject, int64_t timestamp_ms,
           std::string_view body);

  // Number of messages recorded so far.
  uint64_t seen() const { return seen_; }
  // Of those, how many were above the ack floor (pending), and the last sequence recorded (0
  // before the first).
  uint64_t pending() const { return pending_; }
  uint64_t last_sequence() const { return last_sequence_; }

  // The result: kept messages oldest first, counts, sorted pending subjects. Leaves the window
  // empty.
  ReplayResult TakeResult();

 private:
  uint64_t ack_floor_;
  size_t max_messages_;
  size_t max_body_bytes_;
  std::vector<ReplayedMessage> ring_;  // capacity max_messages_; next_ is the oldest when full
  size_t next_ = 0;
  uint64_t seen_ = 0;
  uint64_t handled_ = 0;
  uint64_t pending_ = 0;
  uint64_t last_sequence_ = 0;
  std::set<std::string, std::less<>> pending_subjects_;
};

}  // namespace agentckpt
