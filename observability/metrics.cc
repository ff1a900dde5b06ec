#include "observability/metrics.h"

#include <cstdio>

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

std::string FormatNumber(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// Escapes a label value per the exposition format.
std::string LabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Header(const char* name, const char* type, const char* help, std::string* out) {
  *out += std::string("# HELP ") + name + " " + help + "\n";
  *out += std::string("# TYPE ") + name + " " + type + "\n";
}

void Sample(const std::string& name, const std::string& labels, double value, std::string* out) {
  *out += name;
  if (!labels.empty()) *out += "{" + labels + "}";
  *out += " " + FormatNumber(value) + "\n";
}

void CounterByLabel(const char* name, const char* label, const char* help,
                    const std::map<std::string, uint64_t>& values, std::string* out) {
  Header(name, "counter", help, out);
  for (const auto& [k, v] : values) {
    Sample(name, std::string(label) + "=\"" + LabelValue(k) + "\"", static_cast<double>(v), out);
  }
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
    std::string le = i < bounds_.size() ? FormatNumber(bounds_[i]) : "+Inf";
    Sample(name + "_bucket", prefix + "le=\"" + le + "\"", static_cast<double>(cumulative), out);
  }
  Sample(name + "_sum", labels, sum_, out);
  Sample(name + "_count", labels, static_cast<double>(count_), out);
}

Metrics::Metrics()
    : checkpoint_bytes_(SizeBounds()),
      restore_seconds_({0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60}) {}

void Metrics::ObserveRestore(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  restore_seconds_.Observe(seconds);
}

void Metrics::SetLedgerOutcomeUnknown(int64_t calls) {
  std::lock_guard<std::mutex> lock(mu_);
  ledger_outcome_unknown_ = calls;
}

void Metrics::CountRestoreFailure() {
  std::lock_guard<std::mutex> lock(mu_);
  ++restore_failures_;
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
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  out.reserve(8192);
  Header("agentckpt_checkpoint_duration_seconds", "histogram",
         "Time from trigger to durable checkpoint, by trigger.", &out);
  for (const auto& [trigger, h] : checkpoint_seconds_) {
    h.Render("agentckpt_checkpoint_duration_seconds", "trigger=\"" + LabelValue(trigger) + "\"",
             &out);
  }
  Header("agentckpt_checkpoint_size_bytes", "histogram", "Size of written checkpoints.", &out);
  checkpoint_bytes_.Render("agentckpt_checkpoint_size_bytes", "", &out);
  CounterByLabel("agentckpt_checkpoints_total", "trigger", "Checkpoints written, by trigger.",
                 checkpoints_, &out);
  Header("agentckpt_checkpoint_failures_total", "counter",
         "Checkpoint operations that failed, by trigger and reason.", &out);
  for (const auto& [key, v] : failures_) {
    Sample("agentckpt_checkpoint_failures_total",
           "trigger=\"" + LabelValue(key.first) + "\",reason=\"" + LabelValue(key.second) + "\"",
           static_cast<double>(v), &out);
  }
  Header("agentckpt_store_operation_duration_seconds", "histogram",
         "Latency of checkpoint store calls, by operation.", &out);
  for (const auto& [op, h] : store_seconds_) {
    h.Render("agentckpt_store_operation_duration_seconds", "operation=\"" + LabelValue(op) + "\"",
             &out);
  }
  Header("agentckpt_restore_duration_seconds", "histogram",
         "Duration of restores (load, replay, prompt, resume), as in checkpoint.restored.", &out);
  restore_seconds_.Render("agentckpt_restore_duration_seconds", "", &out);
  Header("agentckpt_restore_failures_total", "counter", "Restores that failed.", &out);
  Sample("agentckpt_restore_failures_total", "", static_cast<double>(restore_failures_), &out);
  Header("agentckpt_ledger_outcome_unknown_calls", "gauge",
         "Tool calls the last restore found begun and never ended (outcome unknown).", &out);
  Sample("agentckpt_ledger_outcome_unknown_calls", "", static_cast<double>(ledger_outcome_unknown_),
         &out);
  Header("agentckpt_nats_connected", "gauge", "1 while connected to NATS, else 0.", &out);
  Sample("agentckpt_nats_connected", "", nats_connected_ ? 1 : 0, &out);
  Header("agentckpt_nats_reconnects_total", "counter", "Reconnections to NATS.", &out);
  Sample("agentckpt_nats_reconnects_total", "", static_cast<double>(nats_reconnects_), &out);
  Header("agentckpt_nats_disconnects_total", "counter", "Losses of the NATS connection.", &out);
  Sample("agentckpt_nats_disconnects_total", "", static_cast<double>(nats_disconnects_), &out);
  CounterByLabel("agentckpt_nats_events_published_total", "event",
                 "Events sent to NATS or buffered for sending after a reconnect.",
                 events_published_, &out);
  CounterByLabel("agentckpt_nats_events_dropped_total", "event",
                 "Events that could not be sent or buffered.", events_dropped_, &out);
  Header("agentckpt_nats_position_stale_total", "counter",
         "Checkpoints written with the last known natsPosition (NATS unreachable).", &out);
  Sample("agentckpt_nats_position_stale_total", "", static_cast<double>(stale_positions_), &out);
  Header("agentckpt_workspace_read_failures_total", "counter",
         "Checkpoints written without workspace state because it could not be read.", &out);
  Sample("agentckpt_workspace_read_failures_total", "", static_cast<double>(workspace_failures_),
         &out);
  Header("agentckpt_http_requests_total", "counter", "HTTP requests answered, by status code.",
         &out);
  for (const auto& [code, v] : http_requests_) {
    Sample("agentckpt_http_requests_total", "code=\"" + std::to_string(code) + "\"",
           static_cast<double>(v), &out);
  }
  CounterByLabel("agentckpt_redactions_total", "rule",
                 "Secrets replaced by a redaction marker, by rule.", redactions_, &out);
  return out;
}

}  // namespace agentckpt
