#include "sidecar/sidecar_metrics.h"

namespace agentckpt {

LiveFigures LiveFiguresOf(const ContextState& context, const JournalWriter& journal) {
  LiveFigures f;
  for (const Gate& g : context.Gates()) f.pending_gates += g.decision ? 0 : 1;
  f.started_calls = static_cast<int64_t>(context.ToolCalls(LedgerCallState::kStarted).size());
  f.outcome_unknown_calls =
      static_cast<int64_t>(context.ToolCalls(LedgerCallState::kOutcomeUnknown).size());
  JournalLag lag = journal.Lag();
  f.journal_entries_since_checkpoint = lag.entries_since_checkpoint;
  f.journal_bytes_since_checkpoint = lag.bytes_since_checkpoint;
  f.journal_undurable_entries = lag.undurable_entries;
  f.journal_refusing_changes = journal.NeedsRepair();
  return f;
}

void CountGateChange(const std::string& event, const Gate& gate, Metrics* metrics) {
  if (event == "requested") {
    metrics->CountGateRequested();
  } else if (event == "resolved" && gate.decision) {
    metrics->CountGateResolved(
        gate.decision->expired ? "expired" : std::string(GateStateName(gate.decision->decision)));
  } else if (event == "consumed") {
    metrics->CountGateConsumed();
  }
}

}  // namespace agentckpt
