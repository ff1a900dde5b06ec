// The demo agent's NATS side: its JetStream inbox (stream + durable consumer), publishing inbox
// messages, consuming and acking them, and watching the sidecar's events.
#pragma once

#include <nats/nats.h>

#include <functional>
#include <string>
#include <vector>

namespace demo {

struct InboxMessage {
  uint64_t stream_sequence = 0;
  std::string subject;
  std::string data;
};

class Nats {
 public:
  // Connects; exits the process with a message if it cannot (a demo, not a daemon).
  explicit Nats(const std::string& url);
  ~Nats();

  // Creates stream `stream` on subjects "inbox.>" and durable pull consumer `agent` filtered on
  // "inbox.<agent>.>" with explicit acks (both idempotent).
  void SetupInbox(const std::string& stream, const std::string& agent);
  // Publishes `count` task messages to inbox.<agent>.tasks through JetStream.
  void Publish(const std::string& agent, int count, const std::string& prefix);
  // Fetches up to `max` messages from the durable consumer, calls `handle` for each, then acks.
  std::vector<InboxMessage> FetchAndAck(const std::string& stream, const std::string& agent,
                                        int max, const std::function<void(const InboxMessage&)>&
                                                     handle);
  // Prints every message on agent.<agent>.> with a wall-clock time until `seconds` elapse or
  // a message on `until_subject_suffix` arrives (then returns true).
  bool Watch(const std::string& agent, int seconds, const std::string& until_subject_suffix);

 private:
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
};

}  // namespace demo
