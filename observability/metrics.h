// Metrics: the sidecar's counters, gauges and histograms, rendered in the Prometheus text
// exposition format (version 0.0.4) for GET /metrics, with the process metrics
// (process_metrics.h). Names are listed in docs/observability.md. All methods are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
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

// Figures read when /metrics is rendered (Metrics::SetLiveSource): state the sidecar holds
// anyway, so no counter can drift from it.
struct LiveFigures {
  int64_t pending_gates = 0;                     // gates waiting for a decision
  int64_t started_calls = 0;                     // ledger calls begun and not ended
  int64_t outcome_unknown_calls = 0;             // ledger calls begun before a restart, not ended
  int64_t journal_entries_since_checkpoint = 0;  // journal tail after the newest checkpoint
  int64_t journal_bytes_since_checkpoint = 0;
  int64_t journal_undurable_entries = 0;  // recorded but not yet in the store
  bool journal_refusing_changes = false;  // a failed append, until a checkpoint repairs it
};

class Metrics {
 public:
  // agentckpt_build_info carries the project version (AGENTCKPT_VERSION) from here on.
  Metrics();

  // The newest checkpoint known (written, or found at restore) was taken at `unix_ms`; an older
  // time than the one held is ignored.
  void SetLastCheckpointTime(int64_t unix_ms);
  // One phase of a restore ("load", "replay", "workspace", "prompt", "resume") took `seconds`.
  void ObserveRestorePhase(const std::string& phase, double seconds);
  // A restore built a prompt of `tokens` tokens.
  void ObservePromptTokens(int64_t tokens);
  // A journal entry of `kind` (e.g. "context.patch", "gate.request") was recorded.
  void CountJournalEntry(const std::string& kind);
  // A tool-call ledger request succeeded: `operation` begin|end|reconcile with its `result`
  // (begin: started, replayed, outcome_unknown; end: success, failure; reconcile: the outcome).
  void CountLedgerCall(const std::string& operation, const std::string& result);
  // A gate was requested / resolved with `decision` (approved, rejected, expired) / consumed.
  void CountGateRequested();
  void CountGateResolved(const std::string& decision);
  void CountGateConsumed();
  // An HTTP request for `route` (a path template such as "/v1/checkpoints/{id}") with `method`
  // took `seconds` from routing to its response.
  void ObserveHttpRequest(const std::string& method, const std::string& route, double seconds);
  // `source` is called (without this object's lock) at each Render for the live gauges; it must
  // be thread-safe and outlive this object, or be replaced first. Unset: those gauges read 0,
  // except agentckpt_ledger_outcome_unknown_calls, which keeps the last restore's count.
  void SetLiveSource(std::function<LiveFigures()> source);

  // Shows `trigger`'s checkpoint counter and duration histogram at zero until the first
  // checkpoint of it, so that rate() sees that first checkpoint too (a series that appears with
  // its first count already in it has no increase).
  void DeclareTrigger(const std::string& trigger);
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
  // A restore finished in `seconds` (its phases, checkpoint.restored's totalMs) at `unix_ms`
  // (0: unknown; the last-restore gauges then keep their previous values), or failed.
  void ObserveRestore(double seconds, int64_t unix_ms = 0);
  void CountRestoreFailure();
  // The tool-call ledger: calls found open (outcome unknown) by the last restore; shown until
  // a live source (SetLiveSource) reports the current count.
  void SetLedgerOutcomeUnknown(int64_t calls);
  // `count` secrets matching redaction rule `rule` were replaced by markers.
  void CountRedactions(const std::string& rule, uint64_t count);
  // An HTTP request was answered with `code`.
  void CountHttpRequest(int code);

  // The whole exposition, ending in a newline.
  std::string Render() const;

 private:
  // Appends the families added with the journal, ledger, gates and phases (metrics_render.cc).
  void RenderActivity(const std::optional<LiveFigures>& live, std::string* out) const;

  std::function<LiveFigures()> live_source_;  // guarded by source_mu_
  mutable std::mutex source_mu_;
  mutable std::mutex mu_;
  std::map<std::string, Histogram> restore_phase_seconds_;  // by phase
  Histogram prompt_tokens_;
  std::map<std::pair<std::string, std::string>, Histogram> http_seconds_;  // (method, route)
  std::map<std::string, uint64_t> journal_entries_;                        // by kind
  std::map<std::pair<std::string, std::string>, uint64_t> ledger_calls_;   // (operation, result)
  std::map<std::string, uint64_t> gates_resolved_;                         // by decision
  uint64_t gates_requested_ = 0;
  uint64_t gates_consumed_ = 0;
  int64_t last_checkpoint_ms_ = 0;  // 0: none known
  int64_t last_restore_ms_ = 0;     // 0: none known
  double last_restore_seconds_ = 0;
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
