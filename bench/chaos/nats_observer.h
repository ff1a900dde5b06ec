// NatsObserver: the chaos harness's view of NATS. It records, with the wall-clock time of
// arrival, every message on the sidecar's event subjects (agent.<id>.>) and on the agent's
// inbox (inbox.<id>.>); it feeds the inbox through JetStream and snapshots the agent's durable
// consumer.
#pragma once

#include <nats/nats.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
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

class NatsObserver {
 public:
  NatsObserver() = default;
  ~NatsObserver();
  NatsObserver(const NatsObserver&) = delete;
  NatsObserver& operator=(const NatsObserver&) = delete;

  // Connects and subscribes. kUnavailable if NATS cannot be reached.
  agentckpt::Status Start(const std::string& url, const std::string& agent,
                          const std::string& stream);

  // Number of messages recorded so far; messages are never removed, so an index is stable.
  size_t size();
  // A copy of message `i` (< size()).
  Observed at(size_t i);
  // Waits up to `timeout_ms` for a message at index >= `from` whose subject ends in `suffix`;
  // returns its index or -1.
  int64_t WaitFor(size_t from, const std::string& suffix, int timeout_ms);

  // Publishes one inbox message through JetStream (waits for the stream's ack).
  agentckpt::Status Feed(const std::string& body);
  agentckpt::StatusOr<ConsumerState> Consumer();

 private:
  static void OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure);
  std::string agent_, stream_;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  std::vector<natsSubscription*> subs_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Observed> seen_;
};

}  // namespace chaos
