// Checks the SHA-256 digests of a run of journal entries on a helper thread while the caller
// goes on with them in order (restore's fold applies entry k while the digests of k+1.. are
// being checked). Each entry's digest covers its own bytes only, so the digests can be checked
// in any order; the links between entries are the caller's to check.
#pragma once

#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "journal/journal_entry.h"

namespace agentckpt {

class DigestChecker {
 public:
  // Starts checking entries[first..]. `entries` must outlive the checker and not change. Runs on
  // the caller's thread at once when there are fewer than kHelperFrom of them, when the machine
  // has one core, or when a thread cannot be started. Never fails.
  DigestChecker(const std::vector<JournalEntry>& entries, size_t first);
  // Stops the helper where it is and joins it.
  ~DigestChecker();
  DigestChecker(const DigestChecker&) = delete;
  DigestChecker& operator=(const DigestChecker&) = delete;

  // Whether entries[i] (first <= i < entries.size()) passes VerifyJournalEntry; waits until its
  // digest has been checked. False for an index outside that range. One caller thread at a time.
  bool Verified(size_t i);

  // Below this count a thread's start costs more than it saves.
  static constexpr size_t kHelperFrom = 128;

 private:
  // Checks every entry in order, publishing each flag; stops early when stop_ is set.
  void CheckAll();

  const std::vector<JournalEntry>& entries_;
  const size_t first_;
  std::vector<char> ok_;            // one flag per entry from first_ on
  std::atomic<size_t> checked_{0};  // flags [0, checked_) are set (release/acquire)
  std::atomic<bool> stop_{false};   // the destructor asks the helper to stop
  std::thread helper_;
};

}  // namespace agentckpt
