// CPU cost of sealing one checkpoint (checkpoint/canonical.h: validate, write the canonical JSON,
// SHA-256), the part of every checkpoint write before the store: the 16 KB reference context,
// with a tool-call ledger of 0, 100 and 1,000 completed calls (CKPT_LEDGER_KEEP keeps 1,000 by
// default, and an agent that has made that many tool calls carries all of them in each
// checkpoint).
//
//   build/bin/seal_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <string>

#include "checkpoint/canonical.h"
#include "tests/support/fixtures.h"

namespace agentckpt {
namespace {

// A completed call as the sidecar records it for a ~150-character input and a ~400-character
// output (the sizes journal_bench's ledger section uses).
LedgerCall CompletedCall(int i) {
  LedgerCall c;
  c.call_id = "0f8e2a3c-1b4d-4e5f-8a9b-" + std::to_string(100000000000 + i);
  c.idempotency_key = "lc:call_" + std::to_string(i);
  c.tool_name = "refund";
  c.effect = ToolEffect::kWrite;
  c.args_sha256 = std::string(64, "0123456789abcdef"[i % 16]);
  c.input_summary = std::string(150, 'a' + i % 26);
  c.began_at_ms = 1764000000000 + i * 1000;
  c.state = LedgerCallState::kCompleted;
  c.ended_at_ms = c.began_at_ms + 180;
  LedgerResult r;
  r.output_summary = "refund issued: " + std::string(385, 'b' + i % 20);
  r.duration_ms = 180;
  r.external_id = "re_" + std::to_string(i);
  c.result = r;
  return c;
}

void BM_Seal(benchmark::State& bm) {
  Checkpoint cp = testing::LoadFixtureCheckpoint("checkpoint-16k.json");
  Ledger ledger;
  for (int i = 0; i < bm.range(0); ++i) ledger.completed.push_back(CompletedCall(i));
  cp.schema_version = kSchemaVersion;  // the fixture is a version 1 document
  cp.ledger = ledger;
  size_t bytes = 0;
  for (auto _ : bm) {
    auto sealed = Seal(cp);
    if (!sealed.ok()) {
      bm.SkipWithError(sealed.status().ToString().c_str());
      break;
    }
    bytes = sealed->canonical.size();
    benchmark::DoNotOptimize(sealed->doc.content_sha256.data());
  }
  bm.counters["documentBytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Seal)->Arg(0)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace agentckpt

BENCHMARK_MAIN();
