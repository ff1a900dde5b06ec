// The families of Metrics added with the restore phases, the journal, the ledger, the gates and
// the HTTP latency (the others are rendered in metrics.cc).
#include <optional>

#include "observability/exposition.h"
#include "observability/metrics.h"

#ifndef AGENTCKPT_VERSION
#error "AGENTCKPT_VERSION must be defined (observability/CMakeLists.txt)"
#endif

namespace agentckpt {
namespace {

// A gauge family without labels; its sample only when `value` is set.
void Gauge(const char* name, const char* help, std::optional<double> value, std::string* out) {
  AppendMetricHeader(name, "gauge", help, out);
  if (value) AppendSample(name, "", *value, out);
}

std::string Label(const char* key, const std::string& value) {
  return std::string(key) + "=\"" + EscapeLabelValue(value) + "\"";
}

}  // namespace

void Metrics::RenderActivity(const std::optional<LiveFigures>& live, std::string* out) const {
  AppendMetricHeader("agentckpt_build_info", "gauge",
                     "Always 1; the version of the running sidecar is in its labels.", out);
  AppendSample("agentckpt_build_info", Label("version", AGENTCKPT_VERSION), 1, out);
  const bool restored = last_restore_ms_ > 0;
  Gauge("agentckpt_last_checkpoint_timestamp_seconds",
        "Unix time of the newest checkpoint written or restored by this sidecar (absent until "
        "there is one).",
        last_checkpoint_ms_ > 0
            ? std::optional<double>(static_cast<double>(last_checkpoint_ms_) / 1000.0)
            : std::nullopt,
        out);
  Gauge("agentckpt_last_restore_duration_seconds",
        "Duration of this sidecar's last restore (absent until there is one).",
        restored ? std::optional<double>(last_restore_seconds_) : std::nullopt, out);
  Gauge("agentckpt_last_restore_timestamp_seconds",
        "Unix time this sidecar's last restore finished (absent until there is one).",
        restored ? std::optional<double>(static_cast<double>(last_restore_ms_) / 1000.0)
                 : std::nullopt,
        out);
  AppendMetricHeader("agentckpt_restore_phase_duration_seconds", "histogram",
                     "Duration of each restore phase (load, replay, workspace, prompt, resume), "
                     "as in checkpoint.restored.",
                     out);
  for (const auto& [phase, h] : restore_phase_seconds_) {
    h.Render("agentckpt_restore_phase_duration_seconds", Label("phase", phase), out);
  }
  AppendMetricHeader("agentckpt_restore_prompt_tokens", "histogram",
                     "Tokens of each restoration prompt (CKPT_TOKENIZER).", out);
  prompt_tokens_.Render("agentckpt_restore_prompt_tokens", "", out);
  AppendCounterByLabel("agentckpt_journal_entries_total", "kind",
                       "Journal entries recorded, by kind.", journal_entries_, out);
  AppendMetricHeader("agentckpt_ledger_calls_total", "counter",
                     "Tool-call ledger requests answered, by operation and result.", out);
  for (const auto& [key, v] : ledger_calls_) {
    AppendSample("agentckpt_ledger_calls_total",
                 Label("operation", key.first) + "," + Label("result", key.second),
                 static_cast<double>(v), out);
  }
  AppendMetricHeader("agentckpt_gates_requested_total", "counter", "Approval gates requested.",
                     out);
  AppendSample("agentckpt_gates_requested_total", "", static_cast<double>(gates_requested_), out);
  AppendCounterByLabel("agentckpt_gates_resolved_total", "decision",
                       "Approval gates decided, by decision (approved, rejected, expired).",
                       gates_resolved_, out);
  AppendMetricHeader("agentckpt_gates_consumed_total", "counter",
                     "Gate decisions consumed by the agent.", out);
  AppendSample("agentckpt_gates_consumed_total", "", static_cast<double>(gates_consumed_), out);
  if (live) {
    Gauge("agentckpt_gates_pending", "Approval gates waiting for a decision.",
          static_cast<double>(live->pending_gates), out);
    Gauge("agentckpt_ledger_started_calls", "Tool calls begun and not ended yet.",
          static_cast<double>(live->started_calls), out);
    Gauge("agentckpt_journal_entries_since_checkpoint",
          "Journal entries after the newest checkpoint (replayed at a restore).",
          static_cast<double>(live->journal_entries_since_checkpoint), out);
    Gauge("agentckpt_journal_bytes_since_checkpoint",
          "Payload bytes of the journal entries after the newest checkpoint.",
          static_cast<double>(live->journal_bytes_since_checkpoint), out);
    Gauge("agentckpt_journal_undurable_entries",
          "Journal entries recorded but not yet in the store (async durability).",
          static_cast<double>(live->journal_undurable_entries), out);
    Gauge("agentckpt_journal_refusing_changes",
          "1 while a failed journal append makes the sidecar refuse changes until a checkpoint "
          "repairs the journal (retried after 1, 2, 4 ... up to 30 s), else 0.",
          live->journal_refusing_changes ? 1.0 : 0.0, out);
  }
  AppendMetricHeader("agentckpt_http_request_duration_seconds", "histogram",
                     "Time from routing an HTTP request to its response, by method and route.",
                     out);
  for (const auto& [key, h] : http_seconds_) {
    h.Render("agentckpt_http_request_duration_seconds",
             Label("method", key.first) + "," + Label("route", key.second), out);
  }
}

}  // namespace agentckpt
