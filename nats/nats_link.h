// NatsLink: the sidecar's NATS connection (nats.c): events out, control requests in, and the
// agent's JetStream consumer position.
//
// The connection reconnects forever (a fixed wait between attempts) and is usable before the
// first successful connect: while disconnected, published events go to the client's reconnect
// buffer (options.buffer_bytes) and are sent once the connection is back; an event that does not
// fit, or any publish after Close, is dropped and counted in the metrics
// (agentckpt_nats_events_dropped_total). While connected, Publish writes the event to the socket
// on the calling thread (no flusher thread in between), with a write deadline: a server that
// stops reading makes the write fail after options.write_deadline_ms, and the link reconnects
// instead of holding the publishing thread. All methods are thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "checkpoint/checkpoint.h"
#include "common/status.h"
#include "nats/nats_options.h"
#include "observability/metrics.h"

struct __natsConnection;
struct __natsSubscription;
struct __jsCtx;
struct __natsMsg;

namespace agentckpt {

// The link's settings; authentication and TLS are NatsAuthOptions (nats_options.h).
struct NatsLinkOptions : NatsAuthOptions {
  std::string url;
  std::string name;  // client name shown by the server
  int reconnect_wait_ms = 1000;
  int64_t buffer_bytes = 8 << 20;
  int request_timeout_ms = 1000;  // JetStream API calls
  // A socket write that cannot finish within this fails and the connection is re-established
  // (nats.c's write deadline); 0 would block until TCP gives up.
  int write_deadline_ms = 2000;
};

// A message received on a subscription.
struct NatsRequest {
  std::string subject;
  std::string reply;  // empty when the sender expects no reply
  std::string data;
  std::string traceparent;  // the message's traceparent header, "" when absent
};

class NatsLink {
 public:
  using Handler = std::function<void(const NatsRequest&)>;

  // Creates the connection and starts connecting. Returns at once if the server cannot be
  // reached (the client keeps trying). kInvalidArgument if an option is unusable (bad URL, a
  // credentials or TLS file that cannot be loaded), naming the option; kInternal otherwise.
  static StatusOr<std::unique_ptr<NatsLink>> Connect(const NatsLinkOptions& options,
                                                     Metrics* metrics);
  ~NatsLink();
  NatsLink(const NatsLink&) = delete;
  NatsLink& operator=(const NatsLink&) = delete;

  // Publishes `data` on `subject`; `event` names it in the metrics ("checkpoint.created").
  // Called inside a traced operation (tracing/trace_context.h: CurrentContext), the message
  // carries that context in a W3C traceparent header.
  // OK if sent or buffered; kUnavailable if dropped (buffer full or closed).
  Status Publish(const std::string& event, const std::string& subject, const std::string& data);

  // Subscribes `handler` to `subject`. The handler runs on the client's delivery thread for
  // that subscription (one message at a time) and must not throw. kInternal on failure.
  Status Subscribe(const std::string& subject, Handler handler);

  // True while connected to a server.
  bool Connected() const;

  // Reads the durable consumer's ack floor and pending count. kUnavailable when not connected
  // or the server does not answer in time; kNotFound if the stream or consumer does not exist.
  StatusOr<NatsPosition> ReadConsumerPosition(const std::string& stream,
                                              const std::string& consumer);

  // Sends everything buffered and waits for the server's acknowledgement, up to `timeout_ms`.
  // kUnavailable/kDeadlineExceeded otherwise.
  Status Flush(int timeout_ms);

  // Which server connection the link is on: the server's id and the client id it gave this
  // connection ("" while never connected). A restarted server has a new id, so two different
  // connections never share one. Thread-safe.
  std::string ConnectionId() const;

  // Like Flush, but without holding the link's lock while it waits, so publishes on other
  // threads go on meanwhile (for a background confirmer). `connection_id` is the ConnectionId()
  // read after the server's answer: a flush that succeeded across a reconnect confirms only what
  // was sent on the new connection. kUnavailable/kDeadlineExceeded as Flush.
  Status FlushWithoutBlockingPublishes(int timeout_ms, std::string* connection_id);

  // Bytes of published data not yet sent to the server.
  int BufferedBytes() const;

  // Unsubscribes and closes the connection (idempotent). Later publishes are dropped.
  void Close();

  // The underlying nats.c connection, for parts that talk to JetStream themselves (replay).
  // Valid until Close().
  __natsConnection* connection() const { return nc_; }

 private:
  NatsLink(Metrics* metrics, int request_timeout_ms);
  static void OnMessage(__natsConnection* nc, __natsSubscription* sub, __natsMsg* msg,
                        void* closure);
  static void OnDisconnected(__natsConnection* nc, void* closure);
  static void OnReconnected(__natsConnection* nc, void* closure);
  static void OnConnected(__natsConnection* nc, void* closure);
  // The connection's last callback: nats.c runs a connection's callbacks in order on its own
  // thread, so once this has run no earlier one (OnDisconnected above all) is still pending.
  static void OnClosed(__natsConnection* nc, void* closure);

  Metrics* metrics_;
  int request_timeout_ms_;
  mutable std::mutex mu_;
  bool closed_ = false;
  int flushes_without_lock_ = 0;  // in FlushWithoutBlockingPublishes (under mu_)
  std::condition_variable flushes_done_cv_;
  std::atomic<bool> closing_{false};  // set first in Close(): the disconnect is expected
  std::mutex closed_mu_;
  std::condition_variable closed_cv_;
  bool connection_closed_ = false;  // OnClosed ran (under closed_mu_)
  __natsConnection* nc_ = nullptr;
  __jsCtx* js_ = nullptr;
  std::list<std::unique_ptr<Handler>> handlers_;
  std::list<__natsSubscription*> subs_;
};

}  // namespace agentckpt
