// CPU cost of one context mutation inside the sidecar (ContextState, redaction on, no journal
// and no HTTP): the part of a PATCH /v1/context, PUT /v1/context or POST /v1/tool-calls that runs
// under the context's lock, with the 16 KB reference context in place.
//
//   build/bin/context_update_bench --benchmark_repetitions=5
//   --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <string>

#include "checkpoint/checkpoint_json.h"
#include "context/context_state.h"
#include "redact/redactor.h"
#include "tests/support/fixtures.h"

namespace agentckpt {
namespace {

using nlohmann::json;

std::string Text(int seed, size_t n) {
  std::string s;
  while (s.size() < n) s += "step " + std::to_string(seed++) + " wrote a paragraph; ";
  s.resize(n);
  return s;
}

// The journal hook the sidecar installs, reduced to keeping the payload (no store).
json FixtureContext() {
  json doc = json::parse(testing::ReadSharedFixture("checkpoint-16k.json"));
  return {{"activeTask", doc["activeTask"]},
          {"contextSummary", doc["contextSummary"]},
          {"workspace", doc.value("workspace", json())}};
}

void Setup(ContextState* state, const Redactor* redactor, size_t* journal_bytes) {
  state->set_redactor(redactor);
  state->set_journal([journal_bytes](JournalKind, const std::string& payload) {
    *journal_bytes += payload.size();
    return StatusOr<JournalPosition>(JournalPosition{0, kJournalGenesisSha256});
  });
  json body = FixtureContext();
  if (!state->Replace(body).ok()) std::abort();
}

void BM_MergePatch1K(benchmark::State& bm) {
  Redactor redactor;
  ContextState state;
  size_t journal_bytes = 0;
  Setup(&state, &redactor, &journal_bytes);
  int i = 0;
  for (auto _ : bm) {
    json patch = {{"contextSummary", {{"completedSteps", i}, {"draftContent", Text(i, 1000)}}}};
    ++i;
    if (!state.MergePatch(patch).ok()) bm.SkipWithError("MergePatch failed");
  }
  bm.counters["journalBytes/op"] =
      benchmark::Counter(static_cast<double>(journal_bytes), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_MergePatch1K);

void BM_AppendToolCall(benchmark::State& bm) {
  Redactor redactor;
  ContextState state;
  size_t journal_bytes = 0;
  Setup(&state, &redactor, &journal_bytes);
  int i = 0;
  for (auto _ : bm) {
    json entry = {{"toolName", "search"},
                  {"timestamp", "2026-01-01T00:00:00.000Z"},
                  {"inputSummary", Text(i, 150)},
                  {"outputSummary", Text(i, 400)},
                  {"durationMs", 12},
                  {"success", true}};
    ++i;
    if (!state.AppendToolCall(entry).ok()) bm.SkipWithError("AppendToolCall failed");
  }
}
BENCHMARK(BM_AppendToolCall);

void BM_Replace16K(benchmark::State& bm) {
  Redactor redactor;
  ContextState state;
  size_t journal_bytes = 0;
  Setup(&state, &redactor, &journal_bytes);
  json body = FixtureContext();
  int i = 0;
  for (auto _ : bm) {
    body["contextSummary"]["completedSteps"] = i++;
    if (!state.Replace(body).ok()) bm.SkipWithError("Replace failed");
  }
}
BENCHMARK(BM_Replace16K);

}  // namespace
}  // namespace agentckpt

BENCHMARK_MAIN();
