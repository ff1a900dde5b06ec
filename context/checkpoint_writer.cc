#include "context/checkpoint_writer.h"

#include <cctype>
#include <cmath>
#include <utility>

#include "checkpoint/canonical.h"
#include "common/ids.h"
#include "common/status_macros.h"
#include "observability/json_log.h"
#include "tracing/span.h"

namespace agentckpt {
namespace {

std::string ReasonLabel(StatusCode code) {
  std::string s(StatusCodeName(code));
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

nlohmann::json WriteResult::ToJson() const {
  return {{"checkpointId", checkpoint_id},
          {"sequenceNumber", sequence_number},
          {"sizeBytes", size_bytes},
          {"durationMs", duration_ms},
          {"trigger", std::string(TriggerReasonName(trigger))}};
}

CheckpointWriter::CheckpointWriter(Env* env, CheckpointStore* store, ContextState* context,
                                   Metrics* metrics, WriterOptions options, PositionReader position,
                                   WorkspaceReader workspace, EventSink events)
    : env_(env),
      store_(store),
      context_(context),
      metrics_(metrics),
      options_(std::move(options)),
      position_(std::move(position)),
      workspace_(std::move(workspace)),
      events_(std::move(events)) {
  for (TriggerReason t : {TriggerReason::kPeriodic, TriggerReason::kPreCompaction,
                          TriggerReason::kTaskPhaseChange, TriggerReason::kManual,
                          TriggerReason::kPreShutdown}) {
    metrics_->DeclareTrigger(std::string(TriggerReasonName(t)));
  }
}

double CheckpointWriter::SecondsSince(int64_t start_micros) {
  return static_cast<double>(env_->NowMonotonicMicros() - start_micros) / 1e6;
}

uint64_t CheckpointWriter::last_written_revision() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_written_revision_;
}

void CheckpointWriter::RequireLease(std::function<void(const Status&)> on_lost) {
  std::lock_guard<std::mutex> lock(mu_);
  require_lease_ = true;
  on_lease_lost_ = std::move(on_lost);
}

void CheckpointWriter::SetLease(const LeaseToken& lease) {
  std::lock_guard<std::mutex> lock(mu_);
  lease_ = lease;
}

void CheckpointWriter::SetStandbyReason(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  standby_reason_ = reason;
}

void CheckpointWriter::Fence(const Status& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fenced_.ok()) fenced_ = UnavailableError(reason.message());
}

Status CheckpointWriter::WriteGate() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fenced_.ok()) return fenced_;
  if (require_lease_ && !lease_.has_value()) {
    return UnavailableError("standby: " + standby_reason_);
  }
  return OkStatus();
}

StatusOr<WriteResult> CheckpointWriter::Write(TriggerReason trigger,
                                              const std::string& request_task_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return UnavailableError("the sidecar is shutting down");
  return WriteLocked(trigger, request_task_id);
}

StatusOr<WriteResult> CheckpointWriter::WriteFinal(TriggerReason trigger) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return UnavailableError("the sidecar is shutting down");
  closed_ = true;
  return WriteLocked(trigger, "");
}

StatusOr<WriteResult> CheckpointWriter::WriteForced(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return UnavailableError("the sidecar is shutting down");
  forced_reason_ = reason;
  auto r = WriteLocked(TriggerReason::kPeriodic, "");
  forced_reason_.clear();
  return r;
}

void CheckpointWriter::SetJournal(std::function<void(int64_t)> on_written, int64_t previous) {
  std::lock_guard<std::mutex> lock(mu_);
  on_journal_written_ = std::move(on_written);
  journal_previous_ = previous;
}

StatusOr<std::optional<WriteResult>> CheckpointWriter::WriteIfChanged(TriggerReason trigger) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return UnavailableError("the sidecar is shutting down");
  if (context_->Snapshot().revision == last_written_revision_) {
    return std::optional<WriteResult>();
  }
  ASSIGN_OR_RETURN(WriteResult r, WriteLocked(trigger, ""));
  return std::optional<WriteResult>(std::move(r));
}

StatusOr<Checkpoint> CheckpointWriter::Build(TriggerReason trigger, const ContextSnapshot& snap,
                                             const std::optional<StatusOr<NatsPosition>>& pos) {
  Checkpoint cp;
  cp.agent_id = options_.agent_id;
  ASSIGN_OR_RETURN(cp.checkpoint_id, NewUuidV4(env_));
  cp.timestamp_ms = env_->NowUnixMillis();
  cp.active_task = snap.active_task;
  cp.context_summary = snap.summary;
  cp.workspace = snap.workspace;
  if (!snap.journal.sha256.empty()) cp.journal = snap.journal;
  cp.ledger = snap.ledger;  // schema version 2: written even when empty
  if (!snap.gates.empty()) {
    cp.gates =
        GatesToJson(snap.gates).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  cp.trigger_reason = trigger;
  cp.ttl_days = options_.ttl_days;
  if (pos.has_value()) {
    if (pos->ok()) {
      last_position_ = **pos;
      cp.nats_position = **pos;
    } else {
      metrics_->CountStalePosition();
      LogWarn("natsPosition: using the last known position",
              {{"reason", pos->status().ToString()}, {"known", last_position_.has_value()}});
      cp.nats_position = last_position_;
    }
  }
  if (workspace_) {
    auto ws = workspace_();
    if (ws.ok()) {
      cp.workspace = std::move(ws).value();
    } else {
      metrics_->CountWorkspaceReadFailure();
      LogWarn("workspace: not recorded", {{"reason", ws.status().ToString()}});
      cp.workspace.reset();
    }
  }
  int64_t start = env_->NowMonotonicMicros();
  tracing::Span span = tracing::StartChildSpan("agentckpt.store.get_agent");
  auto agent = store_->GetAgent(options_.agent_id);
  metrics_->ObserveStore("get_agent", SecondsSince(start));
  span.SetError(agent.status());
  span.End();
  if (!agent.ok()) return agent.status().WithContext("store");
  cp.sequence_number = agent->last_sequence + 1;
  return cp;
}

StatusOr<WriteResult> CheckpointWriter::WriteLocked(TriggerReason trigger,
                                                    const std::string& request_task_id) {
  tracing::Span span = tracing::StartSpan("agentckpt.checkpoint.write");
  tracing::SpanScope scope(span);
  span.SetString("gen_ai.agent.id", options_.agent_id);
  span.SetString("agentckpt.trigger", TriggerReasonName(trigger));
  auto written = WriteTraced(trigger, request_task_id);
  if (written.ok()) {
    span.SetString("agentckpt.checkpoint.id", written->checkpoint_id);
    span.SetInt("agentckpt.checkpoint.sequence", written->sequence_number);
    span.SetInt("agentckpt.checkpoint.size_bytes", written->size_bytes);
  } else {
    span.SetError(written.status());
  }
  return written;
}

StatusOr<WriteResult> CheckpointWriter::WriteTraced(TriggerReason trigger,
                                                    const std::string& request_task_id) {
  if (!fenced_.ok()) return fenced_;
  if (require_lease_ && !lease_.has_value()) {
    return UnavailableError("standby: " + standby_reason_);
  }
  int64_t start = env_->NowMonotonicMicros();
  // A consistent cut: the ack floor is read before the context is copied, so every message the
  // position counts as handled was acknowledged before the snapshot and (the agent updates its
  // context before it acks) its effect is in the snapshot. A message acked in between is
  // replayed on restore rather than lost.
  std::optional<StatusOr<NatsPosition>> pos;
  if (position_) pos = position_();
  ContextSnapshot snap = context_->Snapshot();
  auto built = Build(trigger, snap, pos);
  if (!built.ok()) {
    ReportFailure(trigger, request_task_id, built.status());
    return built.status();
  }
  auto sealed = Seal(std::move(built).value());
  if (!sealed.ok()) {
    ReportFailure(trigger, request_task_id, sealed.status());
    return sealed.status();
  }
  int64_t put_start = env_->NowMonotonicMicros();
  PutOptions put_options;
  put_options.keep = options_.keep;
  put_options.lease = lease_;
  const bool journaled = on_journal_written_ && !snap.journal.sha256.empty();
  if (journaled) put_options.journal_compact_through = journal_previous_;
  tracing::Span put_span = tracing::StartChildSpan("agentckpt.store.put");
  put_span.SetString("agentckpt.checkpoint.id", sealed->doc.checkpoint_id);
  put_span.SetInt("agentckpt.checkpoint.sequence", sealed->doc.sequence_number);
  auto put = store_->Put(*sealed, put_options);
  metrics_->ObserveStore("put", SecondsSince(put_start));
  put_span.SetError(put.status());
  put_span.End();
  if (!put.ok() && put.status().code() == StatusCode::kFailedPrecondition &&
      put.status().message().rfind("lease lost", 0) == 0) {
    // Another sidecar took the agent over: stop writing for good (nothing was stored).
    fenced_ = UnavailableError(put.status().message() + "; this sidecar no longer writes");
    ReportFailure(trigger, request_task_id, fenced_);
    if (on_lease_lost_) on_lease_lost_(fenced_);
    return fenced_;
  }
  if (!put.ok()) {
    Status s = put.status().WithContext("store");
    ReportFailure(trigger, request_task_id, s);
    return s;
  }
  last_written_revision_ = snap.revision;
  if (journaled) {
    journal_previous_ = snap.journal.sequence;
    on_journal_written_(snap.journal.sequence);
  }
  WriteResult r;
  r.checkpoint_id = sealed->doc.checkpoint_id;
  r.sequence_number = sealed->doc.sequence_number;
  r.size_bytes = sealed->doc.size_bytes;
  r.trigger = trigger;
  double seconds = SecondsSince(start);
  r.duration_ms = std::round(seconds * 1e6) / 1000.0;  // whole microseconds
  metrics_->ObserveCheckpoint(std::string(TriggerReasonName(trigger)), seconds, r.size_bytes);
  metrics_->SetLastCheckpointTime(sealed->doc.timestamp_ms);
  nlohmann::json payload = r.ToJson();
  if (!forced_reason_.empty()) payload["reason"] = forced_reason_;
  if (sealed->doc.journal) payload["journalSequence"] = sealed->doc.journal->sequence;
  events_("checkpoint.created", payload);
  payload["event"] = "checkpoint.created";
  payload["agentId"] = options_.agent_id;
  payload["pruned"] = put->pruned;
  if (!request_task_id.empty()) payload["requestTaskId"] = request_task_id;
  if (sealed->doc.nats_position) {
    payload["lastAckedSequence"] = sealed->doc.nats_position->last_acked_sequence;
  }
  LogInfo("checkpoint written", payload);
  return r;
}

void CheckpointWriter::ReportFailure(TriggerReason trigger, const std::string& request_task_id,
                                     const Status& status) {
  std::string trigger_name(TriggerReasonName(trigger));
  metrics_->CountCheckpointFailure(trigger_name, ReasonLabel(status.code()));
  nlohmann::json payload = {
      {"operation", "checkpoint"}, {"trigger", trigger_name}, {"reason", status.ToString()}};
  events_("checkpoint.failed", payload);
  payload["event"] = "checkpoint.failed";
  payload["agentId"] = options_.agent_id;
  payload["code"] = std::string(StatusCodeName(status.code()));
  if (!request_task_id.empty()) payload["requestTaskId"] = request_task_id;
  LogError("checkpoint failed", payload);
}

}  // namespace agentckpt
