// A journal tail as the sidecar writes one for PATCH /v1/context: `count` chained entries
// (sequences 1..count, from the genesis hash) whose payloads are ~`bytes`-byte merge patches of
// the context summary (completedSteps and draftContent).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "journal/journal_entry.h"

namespace agentckpt::bench {

inline std::string DraftText(int64_t i, size_t n) {
  std::string s = "step " + std::to_string(i) + ": ";
  while (s.size() < n) s += "the agent wrote more of its draft; ";
  s.resize(n);
  return s;
}

inline std::vector<JournalEntry> MakeJournalTail(const std::string& agent, int count,
                                                 size_t bytes) {
  std::vector<JournalEntry> tail;
  std::string prev = kJournalGenesisSha256;
  for (int64_t i = 1; i <= count; ++i) {
    JournalEntry e;
    e.agent_id = agent;
    e.sequence = i;
    e.epoch = 1;
    e.kind = JournalKind::kContextPatch;
    e.payload = nlohmann::json{{"contextSummary",
                                {{"completedSteps", i}, {"draftContent", DraftText(i, bytes)}}}}
                    .dump();
    e.timestamp_ms = 1700000000000 + i;
    e.prev_sha256 = prev;
    SealJournalEntry(&e);
    prev = e.sha256;
    tail.push_back(std::move(e));
  }
  return tail;
}

}  // namespace agentckpt::bench
