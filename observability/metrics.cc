#include "observability/metrics.h"

#include "observability/exposition.h"
#include "observability/process_metrics.h"

namespace agentckpt {
namespace {

const std::vector<double>& DurationBounds() {
  static const std::vector<double> b = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                        0.1,    0.25,  0.5,    1,     2.5,  5};
  return b;
}

const std::vector<double>& SizeBounds() {
  static const std::vector<double> b = {1024,  4096,   8192,   16384,  32768,
                                        65536, 131072, 262144, 524288, 1048576};
  return b;
}

// Restores and their phases: 10 ms to 60 s, with a bound at the 30 s recovery SLA.
const std::vector<double>& RestoreBounds() {
  static const std::vector<double> b = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                        0.5,   1,      2.5,   5,    10,    20,   30,  60};
  return b;
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::Render(const std::string& name, const std::string& labels, std::string* out) const {
  std::string prefix = labels.empty() ? "" : labels + ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    std::string le = i < bounds_.size() ? FormatMetricValue(bounds_[i]) : "+Inf";
    AppendSample(name + "_bucket", prefix + "le=\"" + le + "\"", static_cast<double>(cumulative),
                 out);
  }
  AppendSample(name + "_sum", labels, sum_, out);
  AppendSample(name + "_count", labels, static_cast<double>(count_), out);
}

Metrics::Metrics()
    : prompt_tokens_({250, 500, 1000, 2000, 4000, 8000, 16000, 32000}),
      checkpoint_bytes_(SizeBounds()),
      restore_seconds_(RestoreBounds()) {}

void Metrics::SetLastCheckpointTime(int64_t unix_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (unix_ms > last_checkpoint_ms_) last_checkpoint_ms_ = unix_ms;
}

void Metrics::ObserveRestorePhase(const std::string& phase, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  restore_phase_seconds_.try_emplace(phase, RestoreBounds()).first->second.Observe(seconds);
}

void Metrics::ObservePromptTokens(int64_t tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  prompt_tokens_.Observe(static_cast<double>(tokens));
}

void Metrics::CountJournalEntry(const std::string& kind) {
  std::lock_guard<std::mutex> lock(mu_);
  ++journal_entries_[kind];
}

void Metrics::CountLedgerCall(const std::string& operation, const std::string& result) {
  std::lock_guard<std::mutex> lock(mu_);
  ++ledger_calls_[{operation, result}];
}

void Metrics::CountGateRequested() {
  std::lock_guard<std::mutex> lock(mu_);
  ++gates_requested_;
}

void Metrics::CountGateResolved(const std::string& decision) {
  std::lock_guard<std::mutex> lock(mu_);
  ++gates_resolved_[decision];
}

void Metrics::CountGateConsumed() {
  std::lock_guard<std::mutex> lock(mu_);
  ++gates_consumed_;
}

void Metrics::ObserveHttpRequest(const std::string& method, const std::string& route,
                                 double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  http_seconds_.try_emplace({method, route}, DurationBounds()).first->second.Observe(seconds);
}

void Metrics::SetLiveSource(std::function<LiveFigures()> source) {
  std::lock_guard<std::mutex> lock(source_mu_);
  live_source_ = std::move(source);
}

void Metrics::ObserveRestore(double seconds, int64_t unix_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  restore_seconds_.Observe(seconds);
  if (unix_ms > 0) {
    last_restore_ms_ = unix_ms;
    last_restore_seconds_ = seconds;
  }
}

void Metrics::SetLedgerOutcomeUnknown(int64_t calls) {
  std::lock_guard<std::mutex> lock(mu_);
  ledger_outcome_unknown_ = calls;
}

void Metrics::CountRestoreFailure() {
  std::lock_guard<std::mutex> lock(mu_);
  ++restore_failures_;
}

void Metrics::DeclareTrigger(const std::string& trigger) {
  std::lock_guard<std::mutex> lock(mu_);
  checkpoint_seconds_.try_emplace(trigger, DurationBounds());
  checkpoints_.try_emplace(trigger, 0);
}

void Metrics::ObserveCheckpoint(const std::string& trigger, double seconds, int64_t size_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  checkpoint_seconds_.try_emplace(trigger, DurationBounds()).first->second.Observe(seconds);
  checkpoint_bytes_.Observe(static_cast<double>(size_bytes));
  ++checkpoints_[trigger];
}

void Metrics::CountCheckpointFailure(const std::string& trigger, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  ++failures_[{trigger, reason}];
}

void Metrics::ObserveStore(const std::string& operation, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  store_seconds_.try_emplace(operation, DurationBounds()).first->second.Observe(seconds);
}

void Metrics::CountStalePosition() {
  std::lock_guard<std::mutex> lock(mu_);
  ++stale_positions_;
}

void Metrics::CountWorkspaceReadFailure() {
  std::lock_guard<std::mutex> lock(mu_);
  ++workspace_failures_;
}

void Metrics::CountRedactions(const std::string& rule, uint64_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  redactions_[rule] += count;
}

void Metrics::SetNatsConnected(bool connected) {
  std::lock_guard<std::mutex> lock(mu_);
  nats_connected_ = connected;
}

void Metrics::CountNatsReconnect() {
  std::lock_guard<std::mutex> lock(mu_);
  ++nats_reconnects_;
}

void Metrics::CountNatsDisconnect() {
  std::lock_guard<std::mutex> lock(mu_);
  ++nats_disconnects_;
}

void Metrics::CountEventPublished(const std::string& event) {
  std::lock_guard<std::mutex> lock(mu_);
  ++events_published_[event];
}

void Metrics::CountEventDropped(const std::string& event) {
  std::lock_guard<std::mutex> lock(mu_);
  ++events_dropped_[event];
}

void Metrics::CountHttpRequest(int code) {
  std::lock_guard<std::mutex> lock(mu_);
  ++http_requests_[code];
}

std::string Metrics::Render() const {
  std::optional<LiveFigures> live;
  {
    std::lock_guard<std::mutex> lock(source_mu_);
    if (live_source_) live = live_source_();
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  out.reserve(16384);
  AppendMetricHeader("agentckpt_checkpoint_duration_seconds", "histogram",
                     "Time from trigger to durable checkpoint, by trigger.", &out);
  for (const auto& [trigger, h] : checkpoint_seconds_) {
    h.Render("agentckpt_checkpoint_duration_seconds",
             "trigger=\"" + EscapeLabelValue(trigger) + "\"", &out);
  }
  AppendMetricHeader("agentckpt_checkpoint_size_bytes", "histogram", "Size of written checkpoints.",
                     &out);
  checkpoint_bytes_.Render("agentckpt_checkpoint_size_bytes", "", &out);
  AppendCounterByLabel("agentckpt_checkpoints_total", "trigger", "Checkpoints written, by trigger.",
                       checkpoints_, &out);
  AppendMetricHeader("agentckpt_checkpoint_failures_total", "counter",
                     "Checkpoint operations that failed, by trigger and reason.", &out);
  for (const auto& [key, v] : failures_) {
    AppendSample("agentckpt_checkpoint_failures_total",
                 "trigger=\"" + EscapeLabelValue(key.first) + "\",reason=\"" +
                     EscapeLabelValue(key.second) + "\"",
                 static_cast<double>(v), &out);
  }
  AppendMetricHeader("agentckpt_store_operation_duration_seconds", "histogram",
                     "Latency of checkpoint store calls, by operation.", &out);
  for (const auto& [op, h] : store_seconds_) {
    h.Render("agentckpt_store_operation_duration_seconds",
             "operation=\"" + EscapeLabelValue(op) + "\"", &out);
  }
  AppendMetricHeader(
      "agentckpt_restore_duration_seconds", "histogram",
      "Duration of restores (load, replay, prompt, resume), as in checkpoint.restored.", &out);
  restore_seconds_.Render("agentckpt_restore_duration_seconds", "", &out);
  AppendMetricHeader("agentckpt_restore_failures_total", "counter", "Restores that failed.", &out);
  AppendSample("agentckpt_restore_failures_total", "", static_cast<double>(restore_failures_),
               &out);
  AppendMetricHeader("agentckpt_ledger_outcome_unknown_calls", "gauge",
                     "Tool calls begun before a restart and not ended yet (outcome unknown).",
                     &out);
  AppendSample("agentckpt_ledger_outcome_unknown_calls", "",
               static_cast<double>(live ? live->outcome_unknown_calls : ledger_outcome_unknown_),
               &out);
  AppendMetricHeader("agentckpt_nats_connected", "gauge", "1 while connected to NATS, else 0.",
                     &out);
  AppendSample("agentckpt_nats_connected", "", nats_connected_ ? 1 : 0, &out);
  AppendMetricHeader("agentckpt_nats_reconnects_total", "counter", "Reconnections to NATS.", &out);
  AppendSample("agentckpt_nats_reconnects_total", "", static_cast<double>(nats_reconnects_), &out);
  AppendMetricHeader("agentckpt_nats_disconnects_total", "counter",
                     "Losses of the NATS connection.", &out);
  AppendSample("agentckpt_nats_disconnects_total", "", static_cast<double>(nats_disconnects_),
               &out);
  AppendCounterByLabel("agentckpt_nats_events_published_total", "event",
                       "Events sent to NATS or buffered for sending after a reconnect.",
                       events_published_, &out);
  AppendCounterByLabel("agentckpt_nats_events_dropped_total", "event",
                       "Events that could not be sent or buffered.", events_dropped_, &out);
  AppendMetricHeader("agentckpt_nats_position_stale_total", "counter",
                     "Checkpoints written with the last known natsPosition (NATS unreachable).",
                     &out);
  AppendSample("agentckpt_nats_position_stale_total", "", static_cast<double>(stale_positions_),
               &out);
  AppendMetricHeader("agentckpt_workspace_read_failures_total", "counter",
                     "Checkpoints written without workspace state because it could not be read.",
                     &out);
  AppendSample("agentckpt_workspace_read_failures_total", "",
               static_cast<double>(workspace_failures_), &out);
  AppendMetricHeader("agentckpt_http_requests_total", "counter",
                     "HTTP requests answered, by status code.", &out);
  for (const auto& [code, v] : http_requests_) {
    AppendSample("agentckpt_http_requests_total", "code=\"" + std::to_string(code) + "\"",
                 static_cast<double>(v), &out);
  }
  AppendCounterByLabel("agentckpt_redactions_total", "rule",
                       "Secrets replaced by a redaction marker, by rule.", redactions_, &out);
  RenderActivity(live, &out);
  AppendProcessMetrics(&out);
  return out;
}

}  // namespace agentckpt
