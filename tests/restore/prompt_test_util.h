// Shared inputs for the restoration prompt tests: replayed messages of a chosen size and
// content, built deterministically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "replay/replay_source.h"

namespace agentckpt::testing {

// `count` messages with stream sequences from `first_seq`, bodies of about `body_bytes` bytes of
// mixed JSON, prose, CJK and emoji; the first `handled` are marked handled.
inline ReplayResult MakeReplay(size_t count, size_t handled, size_t body_bytes,
                               uint64_t first_seq = 1001) {
  static const char* kPieces[] = {
      "{\"type\":\"task.update\",\"taskId\":\"task-4521\",\"note\":\"reviewer asked for a shorter "
      "intro\"} ",
      "Please also check the numbers in section 3 against the Q3 dashboard before publishing. ",
      "注意：第三部分的数据需要重新核对。 ",
      "🚀 deploy window moved to 14:00 UTC ✅ ",
      "ids: 3f0b6c1e-9d2a-4e57-8c41-7a9e2d1f6b03 sha=9a7c3e1f0b2d4c6e8f0a1b3c5d7e9f1a ",
  };
  ReplayResult r;
  for (size_t i = 0; i < count; ++i) {
    ReplayedMessage m;
    m.stream_sequence = first_seq + i;
    m.subject = i % 3 == 0 ? "agent.agent-marketing-prod.inbox.tasks"
                           : "agent.agent-marketing-prod.inbox.chat";
    m.timestamp_ms = 1793760300000 + static_cast<int64_t>(i) * 1000;
    std::string body = "message " + std::to_string(i) + ": ";
    for (size_t k = 0; body.size() < body_bytes; ++k) body += kPieces[(i + k) % 5];
    m.data = body;
    m.original_size = body.size() + (i % 2 == 0 ? 3000 : 0);  // some were cut by the source
    m.handled = i < handled;
    r.messages.push_back(m);
  }
  r.handled_count = handled;
  r.pending_count = count - handled;
  r.ack_floor_now = first_seq + handled - 1;
  if (count > handled) {
    r.pending_subjects = {"agent.agent-marketing-prod.inbox.chat",
                          "agent.agent-marketing-prod.inbox.tasks"};
  }
  return r;
}

}  // namespace agentckpt::testing
