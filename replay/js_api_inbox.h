// JsApiInbox: JetStream API requests sent together, their replies collected on one private inbox.
// nats.c 3.4's JetStream calls (and natsConnection_Request) wait for each reply before the next
// request can be sent; here several requests go out at once and cost one round trip together.
// The same inbox receives the messages of pull requests sent on it.
//
// One inbox belongs to one replay (not thread-safe); the connection it uses may be shared.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "nats/nats_handles.h"

namespace agentckpt {

class JsApiInbox {
 public:
  // Subscribes to a fresh "_INBOX.<unique>.*" on `connection` (borrowed; it must stay open while
  // the inbox is used). kUnavailable when nats.c refuses (e.g. the connection is closed).
  static StatusOr<std::unique_ptr<JsApiInbox>> Open(natsConnection* connection);
  // Unsubscribes; messages still on their way are dropped.
  ~JsApiInbox();
  JsApiInbox(const JsApiInbox&) = delete;
  JsApiInbox& operator=(const JsApiInbox&) = delete;

  // A token unique to this inbox (letters and digits only), e.g. to name consumers after it.
  const std::string& unique() const { return unique_; }

  // Publishes `body` on `subject` with a reply subject on this inbox; returns the request's tag,
  // which its reply carries (TagOf). kUnavailable when the publish fails.
  StatusOr<int> Send(const std::string& subject, const std::string& body);

  // Sends what Send buffered now and waits (at most `wait_ms`) until the server has read it.
  // nats.c's own flusher would send it only after a 1 ms pause. kUnavailable or
  // kDeadlineExceeded when the server did not confirm in time.
  Status Flush(int64_t wait_ms);

  // Flushes (see Flush), then waits until each of `tags` has a reply or `wait_ms` (real time) has
  // passed, whichever comes first; returns the replies that came, by tag. Other messages on the
  // inbox are dropped.
  std::map<int, nats_handles::MsgPtr> Collect(const std::vector<int>& tags, int64_t wait_ms);

  // The next message of any kind on the inbox; null when none came within `wait_ms`, or when a
  // request had no responder (nats.c drops that reply; no_responders() counts them).
  nats_handles::MsgPtr Next(int64_t wait_ms);

  // How many requests sent on this inbox had no responder (e.g. no JetStream on the server).
  int no_responders() const { return no_responders_; }

  // The Status for a reply that did not come (`what` names the request): kUnavailable when a
  // request had no responder, else kDeadlineExceeded.
  Status MissingReply(const std::string& what) const;

  // The tag of a reply to a request sent on this inbox; -1 for any other message (e.g. a
  // JetStream delivery, which keeps its stored subject).
  int TagOf(natsMsg* msg) const;

 private:
  JsApiInbox(natsConnection* connection, std::string prefix, std::string unique,
             natsSubscription* sub);

  natsConnection* connection_;
  std::string prefix_;  // "_INBOX.<unique>."
  std::string unique_;
  nats_handles::SubscriptionPtr sub_;
  int next_tag_ = 0;
  int no_responders_ = 0;
};

}  // namespace agentckpt
