#include "journal/digest_checker.h"

#include <system_error>

namespace agentckpt {

namespace {

// The helper wakes a waiting caller once per this many entries (and at its end): a waiter
// sleeps at most that long past the entry it waits for, and the helper makes a wake-up call
// per 16 entries instead of one per entry.
constexpr size_t kNotifyEvery = 16;

}  // namespace

DigestChecker::DigestChecker(const std::vector<JournalEntry>& entries, size_t first)
    : entries_(entries),
      first_(first),
      ok_(first < entries.size() ? entries.size() - first : 0, 0) {
  if (ok_.size() >= kHelperFrom && std::thread::hardware_concurrency() >= 2) {
    try {
      helper_ = std::thread([this] { CheckAll(); });
      return;
    } catch (const std::system_error&) {
      // No thread: check them all here.
    }
  }
  CheckAll();
}

DigestChecker::~DigestChecker() {
  stop_.store(true, std::memory_order_relaxed);
  if (helper_.joinable()) helper_.join();
}

void DigestChecker::CheckAll() {
  const size_t n = ok_.size();
  for (size_t k = 0; k < n; ++k) {
    if (stop_.load(std::memory_order_relaxed)) break;
    ok_[k] = VerifyJournalEntry(entries_[first_ + k]).ok();
    checked_.store(k + 1, std::memory_order_release);
    if ((k + 1) % kNotifyEvery == 0 || k + 1 == n) checked_.notify_all();
  }
}

bool DigestChecker::Verified(size_t i) {
  if (i < first_ || i >= entries_.size()) return false;
  const size_t k = i - first_;
  size_t seen = checked_.load(std::memory_order_acquire);
  while (seen <= k) {
    checked_.wait(seen, std::memory_order_acquire);
    seen = checked_.load(std::memory_order_acquire);
  }
  return ok_[k] != 0;
}

}  // namespace agentckpt
