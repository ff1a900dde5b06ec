#include "tests/support/fixtures.h"

#include <cstdio>
#include <cstdlib>

#include "checkpoint/checkpoint_json.h"
#include "common/env.h"

namespace agentckpt::testing {

std::string SharedFixturePath(const std::string& name) {
  const char* dir = std::getenv("AGENTCKPT_FIXTURES_DIR");
  std::string base = dir && *dir ? dir : AGENTCKPT_TEST_FIXTURES_DIR;
  return base + "/" + name;
}

std::string ReadSharedFixture(const std::string& name) {
  auto data = Env::Default()->ReadFile(SharedFixturePath(name));
  if (!data.ok()) {
    std::fprintf(stderr, "cannot read fixture %s: %s\n", name.c_str(),
                 data.status().ToString().c_str());
    std::abort();
  }
  return *data;
}

Checkpoint LoadFixtureCheckpoint(const std::string& name) {
  auto cp = CheckpointFromJson(ReadSharedFixture(name));
  if (!cp.ok()) {
    std::fprintf(stderr, "fixture %s does not decode: %s\n", name.c_str(),
                 cp.status().ToString().c_str());
    std::abort();
  }
  return *cp;
}

Checkpoint MakeCheckpoint(const std::string& agent_id, int64_t sequence) {
  Checkpoint cp;
  char id[40];
  std::snprintf(id, sizeof(id), "%08x-0000-4000-8000-%012llx",
                static_cast<unsigned>(std::hash<std::string>()(agent_id) & 0xffffffffu),
                static_cast<unsigned long long>(sequence));
  cp.checkpoint_id = id;
  cp.agent_id = agent_id;
  cp.timestamp_ms = 1793760300000 + sequence * 1000;
  cp.sequence_number = sequence;
  cp.active_task = ActiveTask{"task-1", "Write a post", TaskPhase::kExecuting, 40,
                              1793760000000};
  cp.context_summary.gathering_results = "14 data points gathered";
  cp.context_summary.plan_outline = {"intro", "body", "outro"};
  cp.context_summary.completed_steps = 1;
  cp.context_summary.draft_content = "Draft paragraph " + std::to_string(sequence);
  cp.context_summary.tool_call_log.push_back(
      ToolCallEntry{"read_file", 1793760200000, "posts/a.md", "42 lines", 12, true});
  cp.trigger_reason = TriggerReason::kPeriodic;
  cp.ttl_days = 7;
  return cp;
}

}  // namespace agentckpt::testing
