// NatsObserver: the chaos harness's view of NATS. It records, with the wall-clock time of
// arrival, every message on the sidecar's event subjects (agent.<id>.>) and on the agent's
// inbox (inbox.<id>.>); it feeds the inbox through JetStream and snapshots the agent's durable
// consumer. On a cluster it listens on every server at once, so a server's death loses nothing.
#pragma once

#include <nats/nats.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace chaos {

struct Observed {
  double t = 0;  // wall-clock Unix ms at arrival
  std::string subject;
  nlohmann::json data;  // parsed payload, null if not JSON
};

// The durable consumer state a read-only replay must leave alone (num_waiting excluded: a
// killed agent's pull request expires on its own).
struct ConsumerState {
  uint64_t delivered_stream = 0, ack_floor_stream = 0, num_pending = 0;
  int64_t num_ack_pending = 0, num_redelivered = 0;
  bool operator==(const ConsumerState&) const = default;
  std::string ToString() const;
};

// Connects to NATS for the harness: to every server of `url_list` (comma-separated; nats.c
// then also fails over to servers the cluster announces), or with `pinned` to the first one only
// and back to it, retried forever every 50 ms after a disconnect. kUnavailable with the reason.
agentckpt::StatusOr<natsConnection*> ConnectHarness(const std::string& url_list, bool pinned);

class NatsObserver {
 public:
  NatsObserver() = default;
  ~NatsObserver();
  NatsObserver(const NatsObserver&) = delete;
  NatsObserver& operator=(const NatsObserver&) = delete;

  // Connects and subscribes: one connection per URL of `urls` (each to that server only, and
  // back to it when it returns after a kill), each subscribed to the agent's event subjects and
  // inbox, so that while one server of a cluster is down the others still deliver everything. A
  // message that arrives on several connections is recorded once (the first arrival): the n-th
  // arrival of a subject and payload on a connection is the n-th such message. Feeds and
  // consumer snapshots go through one more connection to `js_url_list` (a comma-separated list:
  // any server). kUnavailable if NATS cannot be reached.
  agentckpt::Status Start(const std::vector<std::string>& urls, const std::string& js_url_list,
                          const std::string& agent, const std::string& stream);

  // Number of messages recorded so far; messages are never removed, so an index is stable.
  size_t size();
  // A copy of message `i` (< size()).
  Observed at(size_t i);
  // Waits up to `timeout_ms` for a message at index >= `from` whose subject ends in `suffix`;
  // returns its index or -1.
  int64_t WaitFor(size_t from, const std::string& suffix, int timeout_ms);

  // Publishes one inbox message through JetStream and waits for the stream's ack. The publish
  // carries the message id `msg_id`, so the stream stores it once however often it is sent;
  // while the stream cannot answer (a leader election after a server was killed) it is sent
  // again, for up to `retry_ms`. A resend carries "attempt": n (2, 3, ...) in its body, so that a
  // repeat by anyone else stays visible. *attempts (if not null): the publishes made.
  agentckpt::Status Feed(const nlohmann::json& body, const std::string& msg_id, int retry_ms,
                         int* attempts = nullptr);
  // The durable consumer's state; asked again for up to `retry_ms` while it cannot be read.
  agentckpt::StatusOr<ConsumerState> Consumer(int retry_ms = 0);

 private:
  // One subscribing connection; `index` tells OnMessage which.
  struct Link {
    NatsObserver* self = nullptr;
    size_t index = 0;
    natsConnection* nc = nullptr;
    std::vector<natsSubscription*> subs;
  };
  // Arrivals of one subject and payload: per connection, and the number recorded.
  struct Arrivals {
    std::vector<int> per_link;
    int recorded = 0;
  };
  static void OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure);
  std::string agent_, stream_;
  std::vector<std::unique_ptr<Link>> links_;
  natsConnection* js_nc_ = nullptr;
  jsCtx* js_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Observed> seen_;
  std::unordered_map<std::string, Arrivals> arrivals_;  // subject + '\0' + payload
};

}  // namespace chaos
