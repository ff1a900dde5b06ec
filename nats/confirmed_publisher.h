// ConfirmedPublisher: at-least-once delivery to the NATS server for the events a caller waits
// for (checkpoint.restored). A core NATS publish is at-most-once: an event written to the socket
// of a server that dies before it reads it is lost, and the publisher is not told. This keeps
// each event until a flush after it (a PING the server answered) succeeds on the connection the
// event was written to; if the link moved to another connection first (the server died, a
// cluster node was killed), it publishes the event again there. So a receiver may see an event
// twice, and should tolerate it (each event carries what identifies it).
//
// The confirming runs on the publisher's own thread: Publish returns as soon as the event is
// written or buffered, like NatsLink::Publish, and never waits for the server.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "nats/nats_link.h"

namespace agentckpt {

struct ConfirmedPublisherOptions {
  int flush_timeout_ms = 2000;   // one confirming flush
  int retry_ms = 200;            // the wait after a failed flush before the next try
  size_t max_unconfirmed = 256;  // beyond it the oldest event is given up (logged)
};

class ConfirmedPublisher {
 public:
  // `link` is borrowed and must outlive this object (or Stop()). Starts the thread.
  ConfirmedPublisher(NatsLink* link, ConfirmedPublisherOptions options = {});
  // Stop().
  ~ConfirmedPublisher();
  ConfirmedPublisher(const ConfirmedPublisher&) = delete;
  ConfirmedPublisher& operator=(const ConfirmedPublisher&) = delete;

  // Publishes like NatsLink::Publish (same arguments and errors; the trace context of the
  // calling thread is not carried to a publication made again later), then keeps the event
  // until the server confirmed it. An event the link dropped at once is not kept.
  // Thread-safe.
  Status Publish(const std::string& event, const std::string& subject, const std::string& data);

  // Waits up to `timeout_ms` until every event published so far is confirmed; true if so.
  // Thread-safe.
  bool WaitConfirmed(int timeout_ms);

  // Ends the thread. Events still unconfirmed are logged ("event not confirmed") and given up.
  // Idempotent; thread-safe.
  void Stop();

 private:
  struct Pending {
    uint64_t id;
    std::string event, subject, data;
    std::string connection;  // the ConnectionId() it was last written on
  };
  void Loop();

  NatsLink* link_;
  ConfirmedPublisherOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;       // wakes the loop: a new event, or Stop()
  std::condition_variable done_cv_;  // wakes WaitConfirmed
  std::deque<Pending> pending_;
  uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace agentckpt
