// NatsRestoreEvents: RestoreEvents (restore/restorer.h) over the sidecar's NATS connection:
// agent.{id}.status, agent.{id}.checkpoint.restored and agent.{id}.checkpoint.failed. Every
// string in a payload passes through the redactor before it is published, like the sidecar's
// other events (docs/security.md). A publish that fails is logged and counted as dropped, never
// fatal. checkpoint.restored, which an agent or operator waits for, is delivered at least once
// to the NATS server (nats/confirmed_publisher.h); the others at most once. Thread-safe.
#pragma once

#include <string>

#include "nats/confirmed_publisher.h"
#include "nats/nats_link.h"
#include "redact/redactor.h"
#include "restore/restorer.h"

namespace agentckpt {

class NatsRestoreEvents final : public RestoreEvents {
 public:
  // `link`, `env` and `redactor` are borrowed and must outlive this object. `redactor` may be
  // null (payloads are published as they are).
  NatsRestoreEvents(NatsLink* link, Env* env, const Redactor* redactor = nullptr);

  void PublishStatus(const std::string& agent_id, const std::string& status) override;
  void PublishRestored(const std::string& agent_id, const RestoreResult& result) override;
  void PublishFailed(const std::string& agent_id, const Status& status) override;

 private:
  // Through `confirmed_` when `confirm`, else straight on the link.
  void Publish(const std::string& event, const std::string& subject, nlohmann::json payload,
               bool confirm = false);
  NatsLink* link_;
  ConfirmedPublisher confirmed_;
  Env* env_;
  const Redactor* redactor_;
};

}  // namespace agentckpt
