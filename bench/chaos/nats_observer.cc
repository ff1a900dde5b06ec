#include "bench/chaos/nats_observer.h"

#include <chrono>

#include "examples/reference_agent/agent_inbox.h"
#include "examples/reference_agent/probe_log.h"
#include "nats/nats_connect.h"
#include "nats/subjects.h"

namespace chaos {

using agentckpt::Status;

std::string ConsumerState::ToString() const {
  return "delivered=" + std::to_string(delivered_stream) +
         " ackFloor=" + std::to_string(ack_floor_stream) +
         " pending=" + std::to_string(num_pending) +
         " ackPending=" + std::to_string(num_ack_pending) +
         " redelivered=" + std::to_string(num_redelivered);
}

NatsObserver::~NatsObserver() {
  for (natsSubscription* s : subs_) {
    natsSubscription_Unsubscribe(s);
    natsSubscription_Destroy(s);
  }
  jsCtx_Destroy(js_);
  natsConnection_Destroy(nc_);
}

void NatsObserver::OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* self = static_cast<NatsObserver*>(closure);
  Observed o;
  o.t = reference_agent::WallMillis();
  o.subject = natsMsg_GetSubject(msg);
  o.data = nlohmann::json::parse(natsMsg_GetData(msg),
                                 natsMsg_GetData(msg) + natsMsg_GetDataLength(msg), nullptr, false);
  if (o.data.is_discarded()) o.data = nullptr;
  natsMsg_Destroy(msg);
  {
    std::lock_guard<std::mutex> lock(self->mu_);
    self->seen_.push_back(std::move(o));
  }
  self->cv_.notify_all();
}

Status NatsObserver::Start(const std::string& url, const std::string& agent,
                           const std::string& stream) {
  agent_ = agent;
  stream_ = stream;
  auto connected = agentckpt::ConnectNatsUrl(url);
  if (!connected.ok()) {
    return agentckpt::UnavailableError("connect " + url + ": " + connected.status().message());
  }
  nc_ = connected->release();
  natsStatus s = natsConnection_JetStream(&js_, nc_, nullptr);
  for (const std::string& subject :
       {agentckpt::subjects::AgentAll(agent), reference_agent::InboxFilter(agent)}) {
    if (s != NATS_OK) break;
    natsSubscription* sub = nullptr;
    s = natsConnection_Subscribe(&sub, nc_, subject.c_str(), &NatsObserver::OnMessage, this);
    if (s == NATS_OK) {
      natsSubscription_SetPendingLimits(sub, -1, -1);
      subs_.push_back(sub);
    }
  }
  if (s == NATS_OK) s = natsConnection_Flush(nc_);
  if (s != NATS_OK)
    return agentckpt::UnavailableError(std::string("subscribe: ") + natsStatus_GetText(s));
  return agentckpt::OkStatus();
}

size_t NatsObserver::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_.size();
}

Observed NatsObserver::at(size_t i) {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_.at(i);
}

int64_t NatsObserver::WaitFor(size_t from, const std::string& suffix, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::unique_lock<std::mutex> lock(mu_);
  size_t i = from;
  for (;;) {
    for (; i < seen_.size(); ++i) {
      const std::string& s = seen_[i].subject;
      if (s.size() >= suffix.size() &&
          s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return static_cast<int64_t>(i);
      }
    }
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && i >= seen_.size()) {
      return -1;
    }
  }
}

Status NatsObserver::Feed(const std::string& body) {
  std::string subject = reference_agent::InboxSubject(agent_);
  jsPubAck* ack = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_Publish(&ack, js_, subject.c_str(), body.data(), static_cast<int>(body.size()),
                            nullptr, &jerr);
  jsPubAck_Destroy(ack);
  if (s != NATS_OK)
    return agentckpt::UnavailableError(std::string("feed: ") + natsStatus_GetText(s));
  return agentckpt::OkStatus();
}

agentckpt::StatusOr<ConsumerState> NatsObserver::Consumer() {
  jsConsumerInfo* ci = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetConsumerInfo(&ci, js_, stream_.c_str(), agent_.c_str(), nullptr, &jerr);
  if (s != NATS_OK) {
    return agentckpt::UnavailableError(std::string("consumer info: ") + natsStatus_GetText(s));
  }
  ConsumerState c;
  c.delivered_stream = ci->Delivered.Stream;
  c.ack_floor_stream = ci->AckFloor.Stream;
  c.num_pending = ci->NumPending;
  c.num_ack_pending = ci->NumAckPending;
  c.num_redelivered = ci->NumRedelivered;
  jsConsumerInfo_Destroy(ci);
  return c;
}

}  // namespace chaos
