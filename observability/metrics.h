// Metrics: the sidecar's counters, gauges and histograms, rendered in the Prometheus text
// exposition format (version 0.0.4) for GET /metrics. Names are listed in docs/http-api.md.
// All methods are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace agentckpt {

// A cumulative histogram with fixed upper bounds (+Inf is implicit).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // Appends the _bucket, _sum and _count lines of `name` with `labels` (e.g. `trigger="manual"`,
  // possibly empty) to `out`.
  void Render(const std::string& name, const std::string& labels, std::string* out) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();

  // A checkpoint was written: duration (seconds, trigger to durable) and document size.
  void ObserveCheckpoint(const std::string& trigger, double seconds, int64_t size_bytes);
  // A checkpoint failed; `reason` is a lower-case status code name, e.g. "already_exists".
  void CountCheckpointFailure(const std::string& trigger, const std::string& reason);
  // A call to the store (`operation` e.g. "put", "get_agent", "list") took `seconds`.
  void ObserveStore(const std::string& operation, double seconds);
  // A checkpoint was written with the last known natsPosition because NATS could not be asked.
  void CountStalePosition();
  // A checkpoint was written without workspace state because it could not be read.
  void CountWorkspaceReadFailure();
  void SetNatsConnected(bool connected);
  void CountNatsReconnect();
  void CountNatsDisconnect();
  // An event was handed to the NATS client (sent or buffered for a reconnect) / was dropped.
  void CountEventPublished(const std::string& event);
  void CountEventDropped(const std::string& event);
  // A restore finished in `seconds` (its four phases, checkpoint.restored's totalMs), or failed.
  void ObserveRestore(double seconds);
  void CountRestoreFailure();
  // The tool-call ledger: calls found open (outcome unknown) by the last restore.
  void SetLedgerOutcomeUnknown(int64_t calls);
  // `count` secrets matching redaction rule `rule` were replaced by markers.
  void CountRedactions(const std::string& rule, uint64_t count);
  // An HTTP request was answered with `code`.
  void CountHttpRequest(int code);

  // The whole exposition, ending in a newline.
  std::string Render() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, Histogram> checkpoint_seconds_;  // by trigger
  Histogram checkpoint_bytes_;
  std::map<std::string, uint64_t> checkpoints_;                       // by trigger
  std::map<std::pair<std::string, std::string>, uint64_t> failures_;  // (trigger, reason)
  std::map<std::string, Histogram> store_seconds_;                    // by operation
  std::map<std::string, uint64_t> events_published_;
  std::map<std::string, uint64_t> events_dropped_;
  std::map<int, uint64_t> http_requests_;
  std::map<std::string, uint64_t> redactions_;  // by rule
  Histogram restore_seconds_;
  uint64_t restore_failures_ = 0;
  int64_t ledger_outcome_unknown_ = 0;
  uint64_t stale_positions_ = 0;
  uint64_t workspace_failures_ = 0;
  uint64_t nats_reconnects_ = 0;
  uint64_t nats_disconnects_ = 0;
  bool nats_connected_ = false;
};

}  // namespace agentckpt
