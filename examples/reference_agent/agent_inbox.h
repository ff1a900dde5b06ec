// AgentInbox: the reference agent's JetStream side. Its inbox is stream `stream` capturing
// "inbox.>", read through the durable pull consumer named after the agent (filter
// "inbox.<agent>.>", explicit acks). Handling a message has one external effect, executed in the
// effect sink (examples/reference_agent/effect_sink.h) over this inbox's connection.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace reference_agent {

// Application subjects of `agent`: where its inbox is and where its results go.
std::string InboxFilter(const std::string& agent);   // "inbox.<agent>.>"
std::string InboxSubject(const std::string& agent);  // "inbox.<agent>.tasks"

// Creates the stream (file storage, subjects "inbox.>") and the agent's durable consumer with
// `ack_wait_ms`; both idempotent. kUnavailable if NATS cannot be reached, kInternal otherwise.
agentckpt::Status SetupInbox(natsConnection* nc, const std::string& stream,
                             const std::string& agent, int64_t ack_wait_ms);

struct InboxMessage {
  uint64_t stream_sequence = 0;
  std::string data;
  natsMsg* msg = nullptr;  // owned by the AgentInbox until acked or the batch is dropped
};

class AgentInbox {
 public:
  // Connects to `nats_url` and binds to the durable, trying both again until
  // `connect_timeout_ms` has passed (a cluster electing leaders answers neither for a while).
  // Returns the last failure then: kUnavailable for a server that cannot be reached or a timeout,
  // kInternal otherwise.
  static agentckpt::StatusOr<std::unique_ptr<AgentInbox>> Open(const std::string& nats_url,
                                                               const std::string& stream,
                                                               const std::string& agent,
                                                               int connect_timeout_ms);
  ~AgentInbox();
  AgentInbox(const AgentInbox&) = delete;
  AgentInbox& operator=(const AgentInbox&) = delete;

  // Fetches up to `max` messages, waiting at most `wait_ms` for the first. An empty vector when
  // there is none. The messages must be passed to Ack (or dropped with Release).
  agentckpt::StatusOr<std::vector<InboxMessage>> Fetch(int max, int wait_ms);
  // The connection the inbox uses (owned by it), for requests to the effect sink.
  natsConnection* connection() const { return nc_; }
  // Acknowledges `m` synchronously (the server has the ack when this returns) and frees it.
  agentckpt::Status Ack(InboxMessage& m);
  // Frees `m` without acking (it is redelivered after the consumer's ack wait).
  static void Release(InboxMessage& m);

 private:
  AgentInbox() = default;
  std::string agent_;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  natsSubscription* sub_ = nullptr;
};

}  // namespace reference_agent
