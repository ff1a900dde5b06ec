// A journal tail as the sidecar writes one for PATCH /v1/context: `count` chained entries
// (sequences 1..count, from the genesis hash) whose payloads are ~`bytes`-byte merge patches of
// the context summary (completedSteps and draftContent).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "journal/journal_entry.h"
#include "tests/support/journal_chain.h"

namespace agentckpt::bench {

inline std::string DraftText(int64_t i, size_t n) {
  std::string s = "step " + std::to_string(i) + ": ";
  while (s.size() < n) s += "the agent wrote more of its draft; ";
  s.resize(n);
  return s;
}

inline std::vector<JournalEntry> MakeJournalTail(const std::string& agent, int count,
                                                 size_t bytes) {
  return testing::ChainedPatchEntries(
      agent, 1, count, 1,
      [bytes](int64_t i) {
        return nlohmann::json{
            {"contextSummary", {{"completedSteps", i}, {"draftContent", DraftText(i, bytes)}}}}
            .dump();
      },
      1700000000000);
}

}  // namespace agentckpt::bench
