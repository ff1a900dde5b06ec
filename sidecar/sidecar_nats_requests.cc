// The sidecar's NATS side: checkpoint.create, checkpoint.restore and gate.resolve requests, their
// replies, and the events it publishes.
#include "common/time_format.h"
#include "context/create_request.h"
#include "observability/json_log.h"
#include "sidecar/restore_service.h"
#include "sidecar/sidecar.h"
#include "sidecar/sidecar_metrics.h"
#include "tracing/span.h"

namespace agentckpt {

using nlohmann::json;

namespace {

// The span of a NATS request the sidecar handles ("process <operation>"), a child of the
// message's traceparent header when it has a valid one.
tracing::Span RequestSpan(const NatsRequest& req, const std::string& operation,
                          const std::string& agent_id) {
  tracing::TraceContext parent;
  if (auto remote = tracing::ParseTraceparent(req.traceparent)) parent = *remote;
  tracing::Span span =
      tracing::StartSpanWithParent("process " + operation, tracing::SpanKind::kConsumer, parent);
  span.SetString("messaging.system", "nats");
  span.SetString("messaging.destination.name", req.subject);
  span.SetString("gen_ai.agent.id", agent_id);
  return span;
}

}  // namespace

void Sidecar::OnGateResolveRequest(const NatsRequest& req) {
  tracing::Span span = RequestSpan(req, "gate.resolve", config_.agent_id);
  tracing::SpanScope scope(span);
  GateReply reply = gates_->Resolve(req.data, "");
  // Every sidecar of the agent receives the request; only the lease holder answers, so a standby
  // never answers first with STANDBY while the holder decides.
  if (reply.status == 503 && reply.body["error"].value("code", "") == "STANDBY") return;
  Respond(req, reply.body);
}

void Sidecar::OnGateChange(const std::string& event, const Gate& gate) {
  CountGateChange(event, gate, &metrics_);
  PublishEvent("gate." + event, GateToJson(gate));
  // A consistent cut records a new gate (its journal entry already made it durable, so a failed
  // checkpoint is reported by the writer and the gate stands). Without a journal (a store that
  // keeps none, or CKPT_DURABILITY=memory) every gate change is checkpointed instead, before the
  // reply, so a decision is never held in memory only.
  if (event == "requested" || journal_->durability() == Durability::kMemory) {
    auto written = writer_->Write(TriggerReason::kManual);
    (void)written;
  }
  if (event == "requested") {
    {
      // Taken so the notification cannot fall between the loop's reading of the gates and its
      // wait: the loop holds this lock for both.
      std::lock_guard<std::mutex> lock(periodic_mu_);
    }
    periodic_cv_.notify_all();  // the expiry sweep recomputes its next wake-up
  }
  if (event == "consumed") return;
  size_t pending = 0;
  for (const Gate& g : context_.Gates()) pending += g.decision ? 0 : 1;
  // suspended while any gate is pending; active again when the last one is decided.
  if (event == "requested" || pending == 0) {
    PublishEvent("status", {{"agentId", config_.agent_id},
                            {"status", pending > 0 ? "suspended" : "active"},
                            {"at", FormatRfc3339Millis(env_->NowUnixMillis())}});
  }
}

json Sidecar::ErrorReply(const Status& status, const std::string& field) {
  return {{"error",
           {{"code", std::string(StatusCodeName(status.code()))},
            {"message", status.message()},
            {"field", field}}}};
}

void Sidecar::Respond(const NatsRequest& req, const json& body) {
  if (req.reply.empty()) return;
  json redacted = body;
  redactor_->RedactJson(&redacted);
  Status s = nats_->Publish("reply", req.reply,
                            redacted.dump(-1, ' ', false, json::error_handler_t::replace));
  if (!s.ok()) LogWarn("reply dropped", {{"subject", req.subject}, {"reason", s.ToString()}});
}

void Sidecar::PublishEvent(const std::string& event, const json& payload) {
  json redacted = payload;  // e.g. the reason of checkpoint.failed
  redactor_->RedactJson(&redacted);
  Status st = nats_->Publish(event, Subject(event),
                             redacted.dump(-1, ' ', false, json::error_handler_t::replace));
  if (!st.ok()) LogWarn("event dropped", {{"event", event}, {"reason", st.ToString()}});
}

void Sidecar::OnCreateRequest(const NatsRequest& req) {
  // A write the coalescer runs on this thread is a child of this span; one it runs later, on
  // its own thread, starts a trace of its own.
  tracing::Span span = RequestSpan(req, "checkpoint.create", config_.agent_id);
  tracing::SpanScope scope(span);
  std::string field;
  auto parsed = ParseCreateRequest(req.data, &field);
  if (!parsed.ok()) {
    // Rejected before the writer: answered, and announced and counted as a failed checkpoint
    // of the trigger it asked for (manual unless it validly asked for pre_compaction).
    const Status& status = parsed.status();
    std::string trigger(TriggerReasonName(RequestedTrigger(req.data)));
    LogWarn("checkpoint request rejected",
            {{"subject", req.subject}, {"reason", status.message()}, {"field", field}});
    metrics_.CountCheckpointFailure(trigger, "invalid_argument");
    PublishEvent("checkpoint.failed", {{"operation", "checkpoint"},
                                       {"trigger", trigger},
                                       {"reason", status.ToString()},
                                       {"field", field}});
    Respond(req, ErrorReply(status, field));
    return;
  }
  // Admitted requests are coalesced into at most one pending write; the rest are refused.
  NatsRequest copy = req;
  creates_->Submit(*parsed, [this, copy](const json& body) { Respond(copy, body); });
}

void Sidecar::OnRestoreRequest(const NatsRequest& req) {
  tracing::Span span = RequestSpan(req, "checkpoint.restore", config_.agent_id);
  tracing::SpanScope scope(span);
  auto result = restore_->Run();
  span.SetError(result.status());
  if (result.ok()) {
    Respond(req, *result);
  } else {
    Respond(req, ErrorReply(result.status()));
  }
}

}  // namespace agentckpt
