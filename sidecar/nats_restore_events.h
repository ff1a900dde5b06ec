// NatsRestoreEvents: RestoreEvents (restore/restorer.h) over the sidecar's NATS connection:
// agent.{id}.status, agent.{id}.checkpoint.restored and agent.{id}.checkpoint.failed. A publish
// that fails is logged and counted as dropped, never fatal. Thread-safe.
#pragma once

#include <string>

#include "restore/restorer.h"
#include "sidecar/nats_link.h"

namespace agentckpt {

class NatsRestoreEvents final : public RestoreEvents {
 public:
  // `link` and `env` are borrowed and must outlive this object.
  NatsRestoreEvents(NatsLink* link, Env* env);

  void PublishStatus(const std::string& agent_id, const std::string& status) override;
  void PublishRestored(const std::string& agent_id, const RestoreResult& result) override;
  void PublishFailed(const std::string& agent_id, const Status& status) override;

 private:
  void Publish(const std::string& event, const std::string& subject, const nlohmann::json& payload);
  NatsLink* link_;
  Env* env_;
};

}  // namespace agentckpt
