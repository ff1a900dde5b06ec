#include "sidecar/nats_restore_events.h"

#include "common/time_format.h"
#include "nats/subjects.h"
#include "observability/json_log.h"
#include "restore/restore_result.h"

namespace agentckpt {

NatsRestoreEvents::NatsRestoreEvents(NatsLink* link, Env* env, const Redactor* redactor)
    : link_(link), confirmed_(link), env_(env), redactor_(redactor) {}

void NatsRestoreEvents::Publish(const std::string& event, const std::string& subject,
                                nlohmann::json payload, bool confirm) {
  // E.g. a skipped checkpoint's reason, a replay or workspace error, or a failure's reason.
  if (redactor_ != nullptr) redactor_->RedactJson(&payload);
  const std::string data = payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  Status s =
      confirm ? confirmed_.Publish(event, subject, data) : link_->Publish(event, subject, data);
  if (!s.ok()) LogWarn("event dropped", {{"event", event}, {"reason", s.ToString()}});
}

void NatsRestoreEvents::PublishStatus(const std::string& agent_id, const std::string& status) {
  Publish("status", subjects::Status(agent_id),
          {{"agentId", agent_id},
           {"status", status},
           {"at", FormatRfc3339Millis(env_->NowUnixMillis())}});
}

void NatsRestoreEvents::PublishRestored(const std::string& agent_id, const RestoreResult& result) {
  Publish("checkpoint.restored", subjects::CheckpointRestored(agent_id),
          RestoredEventPayload(result), /*confirm=*/true);
}

void NatsRestoreEvents::PublishFailed(const std::string& agent_id, const Status& status) {
  Publish("checkpoint.failed", subjects::CheckpointFailed(agent_id),
          {{"operation", "restore"}, {"reason", status.ToString()}});
}

}  // namespace agentckpt
