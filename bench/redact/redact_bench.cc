// Cost of redacting the text fields of a checkpoint (what the sidecar redacts when the context
// arrives): the 16 KB and the largest reference fixture, clean and with secrets sprinkled in.
//
//   build/bin/redact_bench --benchmark_repetitions=20 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "redact/redactor.h"
#include "tests/support/fixtures.h"

namespace agentckpt {
namespace {

std::vector<std::string> TextFields(const Checkpoint& cp) {
  std::vector<std::string> out;
  if (cp.active_task) out.push_back(cp.active_task->title);
  const ContextSummary& s = cp.context_summary;
  out.push_back(s.gathering_results);
  out.insert(out.end(), s.plan_outline.begin(), s.plan_outline.end());
  out.push_back(s.draft_content);
  for (const ToolCallEntry& e : s.tool_call_log) {
    out.push_back(e.input_summary);
    out.push_back(e.output_summary);
  }
  return out;
}

void RedactFields(benchmark::State& state, const std::string& fixture, bool with_secrets) {
  std::vector<std::string> fields = TextFields(testing::LoadFixtureCheckpoint(fixture));
  if (with_secrets) {
    fields[0] += " token=ghp_16C7e42F292c6912E7710c838347Ae178B4a";
    fields[1] += " postgres://u:s3cr3t@db/x Authorization: Bearer 8f3b2c1d9e7a6f5b4c3d2e1f0a9b";
  }
  size_t bytes = 0;
  for (const std::string& f : fields) bytes += f.size();
  Redactor redactor;
  for (auto _ : state) {
    for (const std::string& f : fields) benchmark::DoNotOptimize(redactor.Redact(f));
  }
  state.counters["text_bytes"] = static_cast<double>(bytes);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void BM_Redact16kFixture(benchmark::State& state) {
  RedactFields(state, "checkpoint-16k.json", false);
}
void BM_Redact16kFixtureWithSecrets(benchmark::State& state) {
  RedactFields(state, "checkpoint-16k.json", true);
}
void BM_RedactMaxFixture(benchmark::State& state) {
  RedactFields(state, "checkpoint-max.json", false);
}

BENCHMARK(BM_Redact16kFixture)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Redact16kFixtureWithSecrets)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RedactMaxFixture)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace agentckpt

BENCHMARK_MAIN();
