#include "replay/replay_window.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/utf8.h"

namespace agentckpt {

std::string CutBodyToUtf8(std::string_view body, size_t max_bytes) {
  // A character starting before `max_bytes` ends within 3 more bytes, so this window decides the
  // result; sanitizing never shrinks text, so whatever lies beyond the window is cut anyway.
  size_t window_size =
      max_bytes < body.size() - std::min(body.size(), size_t{3}) ? max_bytes + 3 : body.size();
  std::string_view window = body.substr(0, window_size);
  std::string_view kept = Utf8TruncateBytes(window, max_bytes);
  if (IsValidUtf8(kept)) return std::string(kept);
  std::string clean = Utf8Sanitize(window);
  return std::string(Utf8TruncateBytes(clean, max_bytes));
}

ReplayWindow::ReplayWindow(uint64_t ack_floor, size_t max_messages, size_t max_body_bytes)
    : ack_floor_(ack_floor), max_messages_(max_messages), max_body_bytes_(max_body_bytes) {
  ring_.reserve(max_messages_);
}

void ReplayWindow::Add(uint64_t stream_sequence, std::string_view subject, int64_t timestamp_ms,
                       std::string_view body) {
  if (seen_ > 0 && stream_sequence <= last_sequence_) {
    std::fprintf(stderr, "ReplayWindow: sequence %llu after %llu\n",
                 static_cast<unsigned long long>(stream_sequence),
                 static_cast<unsigned long long>(last_sequence_));
    std::abort();  // the caller broke the oldest-first contract
  }
  last_sequence_ = stream_sequence;
  ++seen_;
  bool handled = stream_sequence <= ack_floor_;
  if (handled) {
    ++handled_;
  } else {
    ++pending_;
    if (pending_subjects_.size() < kMaxPendingSubjects ||
        pending_subjects_.find(subject) != pending_subjects_.end()) {
      pending_subjects_.emplace(subject);
    }
  }
  if (max_messages_ == 0) return;

  ReplayedMessage* slot;
  if (ring_.size() < max_messages_) {
    slot = &ring_.emplace_back();
  } else {
    slot = &ring_[next_];
    next_ = (next_ + 1) % max_messages_;
  }
  slot->stream_sequence = stream_sequence;
  slot->subject.assign(subject);
  slot->timestamp_ms = timestamp_ms;
  slot->data = CutBodyToUtf8(body, max_body_bytes_);
  slot->original_size = body.size();
  slot->handled = handled;
}

ReplayResult ReplayWindow::TakeResult() {
  ReplayResult result;
  result.messages.reserve(ring_.size());
  for (size_t i = 0; i < ring_.size(); ++i) {
    result.messages.push_back(std::move(ring_[(next_ + i) % ring_.size()]));
  }
  result.handled_count = handled_;
  result.pending_count = pending_;
  result.truncated = seen_ - result.messages.size();
  result.ack_floor_now = ack_floor_;
  result.pending_subjects.assign(pending_subjects_.begin(), pending_subjects_.end());

  ring_.clear();
  next_ = 0;
  seen_ = handled_ = pending_ = 0;
  last_sequence_ = 0;
  pending_subjects_.clear();
  return result;
}

}  // namespace agentckpt
