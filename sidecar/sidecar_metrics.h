// The sidecar's side of /metrics: the live gauges read from its context and journal at each
// scrape, and the gate counters. Thread-safe (each call takes the locks of what it reads).
#pragma once

#include <string>

#include "context/context_state.h"
#include "context/journal_writer.h"
#include "gate/gate_record.h"
#include "observability/metrics.h"

namespace agentckpt {

// Pending gates, open ledger calls by state and the journal's lag, as they are now.
LiveFigures LiveFiguresOf(const ContextState& context, const JournalWriter& journal);

// Counts a gate change announced as gate.{event} ("requested", "resolved", "consumed"); a
// resolution is counted under its decision: approved, rejected or expired.
void CountGateChange(const std::string& event, const Gate& gate, Metrics* metrics);

}  // namespace agentckpt
