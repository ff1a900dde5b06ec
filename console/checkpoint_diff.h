// The difference between two checkpoints of one agent, as the console's diff view and
// `agentckpt diff A B --json` show it (docs/console.md "Diff"): task phase and progress, plan
// items added and removed, the tool calls that are new in the later one (tool-call log and
// ledger), the draft's line diff and the change in the JetStream lastAckedSequence. Pure code:
// thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"

namespace agentckpt {

// One line of a line diff: op ' ' (kept), '-' (only in the old text), '+' (only in the new).
struct DiffLine {
  char op = ' ';
  std::string text;
};

// The line diff of `before` and `after` (longest common subsequence over lines; texts over 2,000
// lines each are compared as wholes: every old line removed, every new line added).
std::vector<DiffLine> DiffLines(const std::string& before, const std::string& after);

// The diff of `from` and `to` as JSON (docs/console.md documents every member).
nlohmann::json DiffCheckpoints(const Checkpoint& from, const Checkpoint& to);

}  // namespace agentckpt
