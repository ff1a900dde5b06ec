// Percentiles and the run summary with its targets.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/chaos/chaos_types.h"

namespace chaos {

// {"n", "mean", "p50", "p95", "p99", "max"} of `values` (nearest-rank percentiles); n = 0 and
// nulls when empty.
nlohmann::json Distribution(std::vector<double> values);

// The summary of a run: counts, distributions (recovery by restart kind, agent resume, work
// lost, checkpoint creation time by trigger), and "targets": each {"value", "limit", "pass"},
// plus "pass" (all correctness targets, and the timing ones when options.timing_targets).
nlohmann::json Summarize(const ChaosOptions& options, const std::vector<CycleRow>& rows,
                         const std::vector<nlohmann::json>& created);

// Writes `dir`/summary.json from `dir`/cycles.jsonl of a run that was stopped before its end
// (no checkpoint creation times, no final store check; "partial": true). 0, or 1 on error.
int SummarizePartialRun(const std::string& dir, const ChaosOptions& options);

}  // namespace chaos
