// ContextState's approval gates (context_state.h; the rules are gate/gate_rules.h).
#include <utility>

#include "common/status_macros.h"
#include "context/context_state.h"

namespace agentckpt {

using nlohmann::json;

const Gate* ContextState::FindGateLocked(const std::string& gate_id) const {
  for (const Gate& g : gates_) {
    if (g.gate_id == gate_id) return &g;
  }
  return nullptr;
}

StatusOr<GateUpdate> ContextState::CommitGate(JournalKind kind, Gate g) {
  if (journal_) {
    std::string payload = GateToJson(g).dump(-1, ' ', false, json::error_handler_t::replace);
    ASSIGN_OR_RETURN(journal_position_, journal_(kind, payload));
  }
  GateUpdate u;
  u.gate = g;
  u.changed = true;
  u.journal_sequence = journal_position_.sequence;
  UpsertGate(&gates_, std::move(g));
  ++revision_;
  gate_cv_.notify_all();
  return u;
}

StatusOr<GateUpdate> ContextState::RequestGate(const GateRequestInput& in, int64_t now_ms,
                                               int64_t default_ttl_s,
                                               const std::string& generated_id) {
  GateRequestInput clean = in;  // secrets never reach the journal, a checkpoint or an event
  if (redactor_ != nullptr) {
    redactor_->RedactInPlace(&clean.reason);
    redactor_->RedactJson(&clean.request);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (frozen_) return UnavailableError("the sidecar is shutting down");
  ASSIGN_OR_RETURN(GateOutcome out,
                   agentckpt::RequestGate(gates_, clean, now_ms, default_ttl_s, generated_id));
  if (!out.changed) return GateUpdate{std::move(out.gate), false, journal_position_.sequence};
  return CommitGate(JournalKind::kGateRequest, std::move(out.gate));
}

StatusOr<GateUpdate> ContextState::ResolveGate(const GateResolution& in, int64_t now_ms) {
  GateResolution r = in;
  if (redactor_ != nullptr) redactor_->RedactJson(&r.response);
  std::lock_guard<std::mutex> lock(mu_);
  if (frozen_) return UnavailableError("the sidecar is shutting down");
  const Gate* g = FindGateLocked(r.gate_id);
  if (g == nullptr) return NotFoundError("gateId: no gate " + r.gate_id);
  if (auto expired = ExpireIfDue(*g, now_ms)) {
    RETURN_IF_ERROR(CommitGate(JournalKind::kGateResolve, std::move(*expired)).status());
    g = FindGateLocked(r.gate_id);
  }
  ASSIGN_OR_RETURN(GateOutcome out, agentckpt::ResolveGate(*g, r, now_ms));
  if (!out.changed) return GateUpdate{std::move(out.gate), false, journal_position_.sequence};
  return CommitGate(JournalKind::kGateResolve, std::move(out.gate));
}

StatusOr<GateUpdate> ContextState::ConsumeGate(const std::string& gate_id, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (frozen_) return UnavailableError("the sidecar is shutting down");
  const Gate* g = FindGateLocked(gate_id);
  if (g == nullptr) return NotFoundError("gateId: no gate " + gate_id);
  if (auto expired = ExpireIfDue(*g, now_ms)) {
    RETURN_IF_ERROR(CommitGate(JournalKind::kGateResolve, std::move(*expired)).status());
    g = FindGateLocked(gate_id);
  }
  ASSIGN_OR_RETURN(GateOutcome out, agentckpt::ConsumeGate(*g, now_ms));
  if (!out.changed) return GateUpdate{std::move(out.gate), false, journal_position_.sequence};
  return CommitGate(JournalKind::kGateConsume, std::move(out.gate));
}

StatusOr<std::vector<GateUpdate>> ContextState::ExpireDueGates(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<GateUpdate> out;
  if (frozen_) return out;
  std::vector<Gate> due;
  for (const Gate& g : gates_) {
    if (auto expired = ExpireIfDue(g, now_ms)) due.push_back(std::move(*expired));
  }
  for (Gate& g : due) {
    ASSIGN_OR_RETURN(GateUpdate u, CommitGate(JournalKind::kGateResolve, std::move(g)));
    out.push_back(std::move(u));
  }
  return out;
}

StatusOr<Gate> ContextState::GetGate(const std::string& gate_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Gate* g = FindGateLocked(gate_id);
  if (g == nullptr) return NotFoundError("gateId: no gate " + gate_id);
  return *g;
}

StatusOr<Gate> ContextState::WaitGate(const std::string& gate_id,
                                      std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock<std::mutex> lock(mu_);
  // Bounded: returns at `deadline` at the latest; a gate that is removed ends the wait too.
  while (true) {
    const Gate* g = FindGateLocked(gate_id);
    if (g == nullptr) return NotFoundError("gateId: no gate " + gate_id);
    if (g->decision || frozen_) return *g;
    if (gate_cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
      g = FindGateLocked(gate_id);
      if (g == nullptr) return NotFoundError("gateId: no gate " + gate_id);
      return *g;
    }
  }
}

std::vector<Gate> ContextState::Gates() const {
  std::lock_guard<std::mutex> lock(mu_);
  return gates_;
}

}  // namespace agentckpt
