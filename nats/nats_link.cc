#include "nats/nats_link.h"

#include <nats/nats.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "common/status_macros.h"
#include "nats/nats_connect.h"
#include "nats/nats_handles.h"
#include "nats/ssl_call_lock.h"
#include "observability/json_log.h"
#include "tracing/trace_context.h"

namespace agentckpt {

NatsLink::NatsLink(Metrics* metrics, int request_timeout_ms)
    : metrics_(metrics), request_timeout_ms_(request_timeout_ms) {}

NatsLink::~NatsLink() { Close(); }

StatusOr<std::unique_ptr<NatsLink>> NatsLink::Connect(const NatsLinkOptions& o, Metrics* metrics) {
  std::unique_ptr<NatsLink> link(new NatsLink(metrics, o.request_timeout_ms));
  // nats.c reads and writes one OpenSSL connection from two threads (nats/ssl_call_lock.h).
  if (!SslCallsAreSerialized()) {
    LogWarn("OpenSSL reads and writes are not serialised in this binary; NATS over TLS may race");
  }
  natsOptions* raw = nullptr;
  if (natsOptions_Create(&raw) != NATS_OK) return InternalError("natsOptions_Create failed");
  nats_handles::OptionsPtr opts(raw);
  // NATS_URL may list several servers separated by commas.
  std::vector<std::string> urls;
  for (size_t start = 0; start <= o.url.size();) {
    size_t comma = std::min(o.url.find(',', start), o.url.size());
    std::string one = o.url.substr(start, comma - start);
    one.erase(0, one.find_first_not_of(' '));
    one.erase(one.find_last_not_of(' ') + 1);
    if (!one.empty()) urls.push_back(one);
    start = comma + 1;
  }
  std::vector<const char*> servers;
  for (const std::string& u : urls) servers.push_back(u.c_str());
  if (servers.empty()) return InvalidArgumentError("NATS_URL: no server URL");
  natsStatus s =
      natsOptions_SetServers(opts.get(), servers.data(), static_cast<int>(servers.size()));
  if (s != NATS_OK) return NatsOptionError("NATS_URL", s);
  natsOptions_SetName(opts.get(), o.name.c_str());
  natsOptions_SetMaxReconnect(opts.get(), -1);
  natsOptions_SetReconnectWait(opts.get(), o.reconnect_wait_ms);
  natsOptions_SetReconnectJitter(opts.get(), 0, 0);
  natsOptions_SetReconnectBufSize(opts.get(), static_cast<int>(o.buffer_bytes));
  natsOptions_SetTimeout(opts.get(), 2000);
  // A publish is written to the socket by the publishing thread, not left for nats.c's flusher
  // thread to send. The sidecar publishes one event per checkpoint (and one reply per request), so
  // there is nothing to batch, and a flusher woken per event is one more thread to schedule on
  // the request's path: with a fresh Node client on 2 cores it added 0.1-0.9 ms to the p99 of
  // POST /v1/checkpoints' durationMs (docs/performance.md).
  natsOptions_SetSendAsap(opts.get(), true);
  // With no deadline a write to a server that stops reading (stopped, or a peer gone without a
  // reset once the socket buffers are full) blocks the publishing thread, and with it every
  // thread waiting for the connection's lock, until TCP gives up (minutes). With it the write
  // fails, nats.c drops the connection and reconnects, and the events go to the reconnect buffer.
  natsOptions_SetWriteDeadline(opts.get(), o.write_deadline_ms);
  natsOptions_SetDisconnectedCB(opts.get(), &NatsLink::OnDisconnected, link.get());
  natsOptions_SetReconnectedCB(opts.get(), &NatsLink::OnReconnected, link.get());
  natsOptions_SetClosedCB(opts.get(), &NatsLink::OnClosed, link.get());
  RETURN_IF_ERROR(ApplyNatsAuthOptions(opts.get(), o));
  // One synchronous attempt first, so that credentials or TLS the server rejects are reported
  // as bad settings; an unreachable server is retried in the background. A client that signs
  // the server's nonce makes up to kSignedConnectAttempts connections before it calls its
  // credentials refused (nats/nats_connect.h: nats.c drops one signature in 256).
  const bool signs_nonce = SignsNonce(o);
  natsConnection* nc = nullptr;
  int connections = 0;
  s = ConnectRetryingRefusedSignature(opts.get(), signs_nonce ? kSignedConnectAttempts : 1, &nc,
                                      &connections);
  if (connections > 1) {
    LogInfo("nats refused a signed connection; connected again with a new nonce",
            {{"connections", connections}, {"connected", s == NATS_OK}});
  }
  if (s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED) {
    std::string setting = !o.user.empty()             ? "NATS_PASSWORD"
                          : !o.creds_file.empty()     ? "NATS_CREDS"
                          : !o.nkey_seed_file.empty() ? "NATS_NKEY_SEED"
                                                      : "NATS_URL";
    return NatsOptionError(setting + ": the server refused the credentials", s);
  }
  if (s == NATS_SSL_ERROR) return NatsOptionError("NATS_TLS_CA: TLS handshake failed", s);
  if (s == NATS_OK) {
    metrics->SetNatsConnected(true);
  } else {
    natsOptions_SetRetryOnFailedConnect(opts.get(), true, &NatsLink::OnConnected, link.get());
    s = natsConnection_Connect(&nc, opts.get());
    if (s == NATS_OK) {
      metrics->SetNatsConnected(true);
    } else if (s == NATS_NOT_YET_CONNECTED) {
      metrics->SetNatsConnected(false);
      LogWarn("nats not reachable yet; retrying in the background", {{"url", o.url}});
    } else {
      return NatsOptionError("NATS_URL", s);
    }
  }
  link->nc_ = nc;
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = o.request_timeout_ms;
  if (natsConnection_JetStream(&link->js_, nc, &jo) != NATS_OK) {
    return InternalError("cannot create a JetStream context");
  }
  return link;
}

void NatsLink::OnConnected(natsConnection*, void* closure) {
  auto* self = static_cast<NatsLink*>(closure);
  self->metrics_->SetNatsConnected(true);
  LogInfo("nats connected");
}

void NatsLink::OnDisconnected(natsConnection*, void* closure) {
  auto* self = static_cast<NatsLink*>(closure);
  self->metrics_->SetNatsConnected(false);
  if (self->closing_) return;
  self->metrics_->CountNatsDisconnect();
  LogWarn("nats disconnected; events are buffered until the connection is back");
}

void NatsLink::OnClosed(natsConnection*, void* closure) {
  auto* self = static_cast<NatsLink*>(closure);
  std::lock_guard<std::mutex> lock(self->closed_mu_);
  self->connection_closed_ = true;
  self->closed_cv_.notify_all();
}

void NatsLink::OnReconnected(natsConnection*, void* closure) {
  auto* self = static_cast<NatsLink*>(closure);
  self->metrics_->SetNatsConnected(true);
  self->metrics_->CountNatsReconnect();
  LogInfo("nats reconnected");
}

void NatsLink::OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* handler = static_cast<Handler*>(closure);
  NatsRequest req;
  req.subject = natsMsg_GetSubject(msg);
  const char* reply = natsMsg_GetReply(msg);
  if (reply != nullptr) req.reply = reply;
  req.data.assign(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
  const char* traceparent = nullptr;
  if (natsMsgHeader_Get(msg, "traceparent", &traceparent) == NATS_OK && traceparent != nullptr) {
    req.traceparent = traceparent;
  }
  natsMsg_Destroy(msg);
  (*handler)(req);
}

Status NatsLink::Publish(const std::string& event, const std::string& subject,
                         const std::string& data) {
  std::lock_guard<std::mutex> lock(mu_);
  natsStatus s = NATS_CONNECTION_CLOSED;
  // Inside a traced operation, the message carries its context as a traceparent header.
  const tracing::TraceContext trace = tracing::CurrentContext();
  if (!closed_ && !trace.valid()) {
    s = natsConnection_Publish(nc_, subject.c_str(), data.data(), static_cast<int>(data.size()));
  } else if (!closed_) {
    natsMsg* msg = nullptr;
    s = natsMsg_Create(&msg, subject.c_str(), nullptr, data.data(), static_cast<int>(data.size()));
    if (s == NATS_OK) {
      s = natsMsgHeader_Set(msg, "traceparent", tracing::FormatTraceparent(trace).c_str());
    }
    if (s == NATS_OK) s = natsConnection_PublishMsg(nc_, msg);
    natsMsg_Destroy(msg);
  }
  if (s != NATS_OK) {
    metrics_->CountEventDropped(event);
    return UnavailableError("publish " + subject + ": " + natsStatus_GetText(s));
  }
  metrics_->CountEventPublished(event);
  return OkStatus();
}

Status NatsLink::Subscribe(const std::string& subject, Handler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return FailedPreconditionError("nats connection closed");
  handlers_.push_back(std::make_unique<Handler>(std::move(handler)));
  natsSubscription* sub = nullptr;
  natsStatus s = natsConnection_Subscribe(&sub, nc_, subject.c_str(), &NatsLink::OnMessage,
                                          handlers_.back().get());
  if (s != NATS_OK) {
    handlers_.pop_back();
    return InternalError("subscribe " + subject + ": " + natsStatus_GetText(s));
  }
  subs_.push_back(sub);
  return OkStatus();
}

bool NatsLink::Connected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !closed_ && natsConnection_Status(nc_) == NATS_CONN_STATUS_CONNECTED;
}

StatusOr<NatsPosition> NatsLink::ReadConsumerPosition(const std::string& stream,
                                                      const std::string& consumer) {
  if (!Connected()) return UnavailableError("nats not connected");
  jsConsumerInfo* ci = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = request_timeout_ms_;
  natsStatus s = js_GetConsumerInfo(&ci, js_, stream.c_str(), consumer.c_str(), &jo, &jerr);
  if (s == NATS_NOT_FOUND) {
    return NotFoundError("consumer " + consumer + " on stream " + stream + " not found");
  }
  if (s != NATS_OK) {
    return UnavailableError("consumer info " + stream + "/" + consumer + ": " +
                            natsStatus_GetText(s));
  }
  NatsPosition p;
  p.stream_name = stream;
  p.consumer_name = consumer;
  p.last_acked_sequence = ci->AckFloor.Stream;
  p.pending_message_count = ci->NumPending;
  jsConsumerInfo_Destroy(ci);
  return p;
}

Status NatsLink::Flush(int timeout_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return UnavailableError("nats connection closed");
  natsStatus s = natsConnection_FlushTimeout(nc_, timeout_ms);
  if (s == NATS_TIMEOUT) return DeadlineExceededError("nats flush timed out");
  if (s != NATS_OK) return UnavailableError(std::string("nats flush: ") + natsStatus_GetText(s));
  return OkStatus();
}

std::string NatsLink::ConnectionId() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || nc_ == nullptr) return "";
  char server[128] = {0};
  uint64_t cid = 0;
  if (natsConnection_GetConnectedServerId(nc_, server, sizeof(server)) != NATS_OK ||
      natsConnection_GetClientID(nc_, &cid) != NATS_OK || server[0] == '\0') {
    return "";
  }
  return std::string(server) + "/" + std::to_string(cid);
}

Status NatsLink::FlushWithoutBlockingPublishes(int timeout_ms, std::string* connection_id) {
  natsConnection* nc = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return UnavailableError("nats connection closed");
    nc = nc_;
    ++flushes_without_lock_;  // Close() waits for it before it frees the connection
  }
  natsStatus s = natsConnection_FlushTimeout(nc, timeout_ms);
  {
    std::lock_guard<std::mutex> lock(mu_);
    --flushes_without_lock_;
  }
  flushes_done_cv_.notify_all();
  if (connection_id != nullptr) *connection_id = ConnectionId();
  if (s == NATS_TIMEOUT) return DeadlineExceededError("nats flush timed out");
  if (s != NATS_OK) return UnavailableError(std::string("nats flush: ") + natsStatus_GetText(s));
  return OkStatus();
}

int NatsLink::BufferedBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_ ? 0 : natsConnection_Buffered(nc_);
}

void NatsLink::Close() {
  closing_ = true;
  std::list<natsSubscription*> subs;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_ || nc_ == nullptr) {
      closed_ = true;
      return;
    }
    closed_ = true;
    subs.swap(subs_);
    nc = nc_;
    js = js_;
  }
  for (natsSubscription* sub : subs) natsSubscription_Unsubscribe(sub);
  // One flush for all of them before they are freed (nats_handles.h, UnsubscribeAndDestroy).
  if (!subs.empty() && natsConnection_Status(nc) == NATS_CONN_STATUS_CONNECTED) {
    natsConnection_FlushTimeout(nc, 1000);
  }
  for (natsSubscription* sub : subs) natsSubscription_Destroy(sub);
  jsCtx_Destroy(js);
  natsConnection_Close(nc);
  // natsConnection_Destroy does not wait for the callbacks nats.c has queued (a disconnect
  // callback can run after it returned, on this object and its metrics, both gone by then);
  // the closed callback comes last, so waiting for it waits for them all. Bounded: a shutdown
  // must not hang on the client library.
  {
    std::unique_lock<std::mutex> lock(closed_mu_);
    closed_cv_.wait_for(lock, std::chrono::seconds(2), [this] { return connection_closed_; });
  }
  {
    // natsConnection_Close woke any flush still waiting; it must be out before the free.
    std::unique_lock<std::mutex> lock(mu_);
    flushes_done_cv_.wait(lock, [this] { return flushes_without_lock_ == 0; });
  }
  natsConnection_Destroy(nc);
  metrics_->SetNatsConnected(false);
}

}  // namespace agentckpt
