// A chain of journal entries for tests (pure: journal/ only).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "journal/journal_entry.h"

namespace agentckpt::testing {

// `n` chained context.patch journal entries of `agent_id` from sequence `first` (the first one
// chained to `prev`): entry `seq` has the payload `payload(seq)` and the time
// `base_timestamp_ms + seq`.
inline std::vector<JournalEntry> ChainedPatchEntries(
    const std::string& agent_id, int64_t first, int n, int64_t epoch,
    const std::function<std::string(int64_t)>& payload, int64_t base_timestamp_ms,
    std::string prev = kJournalGenesisSha256) {
  std::vector<JournalEntry> out;
  for (int64_t seq = first; seq < first + n; ++seq) {
    JournalEntry e;
    e.agent_id = agent_id;
    e.sequence = seq;
    e.epoch = epoch;
    e.kind = JournalKind::kContextPatch;
    e.payload = payload(seq);
    e.timestamp_ms = base_timestamp_ms + seq;
    e.prev_sha256 = prev;
    SealJournalEntry(&e);
    prev = e.sha256;
    out.push_back(std::move(e));
  }
  return out;
}

// `n` chained context.patch journal entries of `agent_id` from sequence `first` (the first one
// chained to `prev`), each setting completedSteps to its sequence, at time 1000 + sequence.
inline std::vector<JournalEntry> JournalChain(const std::string& agent_id, int64_t first, int n,
                                              int64_t epoch,
                                              std::string prev = kJournalGenesisSha256) {
  return ChainedPatchEntries(
      agent_id, first, n, epoch,
      [](int64_t seq) {
        return "{\"contextSummary\":{\"completedSteps\":" + std::to_string(seq) + "}}";
      },
      1000, std::move(prev));
}

}  // namespace agentckpt::testing
