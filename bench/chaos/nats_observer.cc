#include "bench/chaos/nats_observer.h"

#include <chrono>
#include <sstream>
#include <thread>

#include "examples/reference_agent/agent_inbox.h"
#include "examples/reference_agent/probe_log.h"
#include "nats/nats_connect.h"
#include "nats/nats_handles.h"
#include "nats/subjects.h"

namespace chaos {

using agentckpt::Status;
using agentckpt::StatusOr;

std::string ConsumerState::ToString() const {
  return "delivered=" + std::to_string(delivered_stream) +
         " ackFloor=" + std::to_string(ack_floor_stream) +
         " pending=" + std::to_string(num_pending) +
         " ackPending=" + std::to_string(num_ack_pending) +
         " redelivered=" + std::to_string(num_redelivered);
}

StatusOr<natsConnection*> ConnectHarness(const std::string& url_list, bool pinned) {
  std::vector<std::string> urls;
  std::istringstream in(url_list);
  for (std::string one; std::getline(in, one, ',');) {
    if (!one.empty()) urls.push_back(one);
  }
  if (urls.empty()) return agentckpt::InvalidArgumentError("no NATS URL in \"" + url_list + "\"");
  if (pinned) urls.resize(1);
  std::vector<const char*> servers;
  for (const std::string& u : urls) servers.push_back(u.c_str());
  natsOptions* raw = nullptr;
  if (natsOptions_Create(&raw) != NATS_OK) return agentckpt::InternalError("natsOptions_Create");
  agentckpt::nats_handles::OptionsPtr opts(raw);
  natsStatus s =
      natsOptions_SetServers(opts.get(), servers.data(), static_cast<int>(servers.size()));
  if (s == NATS_OK) s = natsOptions_SetIgnoreDiscoveredServers(opts.get(), pinned);
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts.get(), -1);
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts.get(), 50);
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts.get(), 2000);
  natsConnection* nc = nullptr;
  if (s == NATS_OK) s = natsConnection_Connect(&nc, opts.get());
  if (s != NATS_OK) {
    return agentckpt::UnavailableError("connect " + url_list + ": " +
                                       agentckpt::NatsErrorDetail(s));
  }
  return nc;
}

NatsObserver::~NatsObserver() {
  // Connections closed first: a close waits for the read loop, which nats.c 3.4 can otherwise
  // have in the middle of a message for a subscription as it is freed (nats/nats_handles.h).
  for (auto& link : links_) natsConnection_Close(link->nc);
  for (auto& link : links_) {
    for (natsSubscription* s : link->subs) natsSubscription_Destroy(s);
  }
  jsCtx_Destroy(js_);
  natsConnection_Destroy(js_nc_);
  for (auto& link : links_) natsConnection_Destroy(link->nc);
}

void NatsObserver::OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* link = static_cast<Link*>(closure);
  NatsObserver* self = link->self;
  Observed o;
  o.t = reference_agent::WallMillis();
  o.subject = natsMsg_GetSubject(msg);
  const char* data = natsMsg_GetData(msg);
  const int len = natsMsg_GetDataLength(msg);
  std::string key = o.subject;
  key.push_back('\0');
  key.append(data, static_cast<size_t>(len));
  {
    // The n-th arrival of this subject and payload on this connection is the n-th such message:
    // recorded when no connection has brought that many yet.
    std::lock_guard<std::mutex> lock(self->mu_);
    Arrivals& a = self->arrivals_[key];
    if (a.per_link.empty()) a.per_link.assign(self->links_.size(), 0);
    const int n = ++a.per_link[link->index];
    if (n <= a.recorded) {
      natsMsg_Destroy(msg);
      return;
    }
    a.recorded = n;
    o.data = nlohmann::json::parse(data, data + len, nullptr, false);
    if (o.data.is_discarded()) o.data = nullptr;
    self->seen_.push_back(std::move(o));
  }
  natsMsg_Destroy(msg);
  self->cv_.notify_all();
}

Status NatsObserver::Start(const std::vector<std::string>& urls, const std::string& js_url_list,
                           const std::string& agent, const std::string& stream) {
  agent_ = agent;
  stream_ = stream;
  // Every link exists (links_.size() is final) before the first message can arrive.
  for (size_t i = 0; i < urls.size(); ++i) {
    auto link = std::make_unique<Link>();
    link->self = this;
    link->index = i;
    links_.push_back(std::move(link));
  }
  for (size_t i = 0; i < urls.size(); ++i) {
    Link& link = *links_[i];
    auto connected = ConnectHarness(urls[i], /*pinned=*/true);
    if (!connected.ok()) return connected.status();
    link.nc = *connected;
    natsStatus s = NATS_OK;
    for (const std::string& subject :
         {agentckpt::subjects::AgentAll(agent), reference_agent::InboxFilter(agent)}) {
      natsSubscription* sub = nullptr;
      s = natsConnection_Subscribe(&sub, link.nc, subject.c_str(), &NatsObserver::OnMessage, &link);
      if (s != NATS_OK) break;
      natsSubscription_SetPendingLimits(sub, -1, -1);
      link.subs.push_back(sub);
    }
    if (s == NATS_OK) s = natsConnection_Flush(link.nc);
    if (s != NATS_OK)
      return agentckpt::UnavailableError(std::string("subscribe: ") + natsStatus_GetText(s));
  }
  auto connected = ConnectHarness(js_url_list, /*pinned=*/false);
  if (!connected.ok()) return connected.status();
  js_nc_ = *connected;
  natsStatus s = natsConnection_JetStream(&js_, js_nc_, nullptr);
  if (s != NATS_OK)
    return agentckpt::UnavailableError(std::string("JetStream context: ") + natsStatus_GetText(s));
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

Status NatsObserver::Feed(const nlohmann::json& body, const std::string& msg_id, int retry_ms,
                          int* attempts) {
  const std::string subject = reference_agent::InboxSubject(agent_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(retry_ms);
  std::string last;
  for (int attempt = 1;; ++attempt) {
    nlohmann::json m = body;
    if (attempt > 1) m["attempt"] = attempt;
    const std::string text = m.dump();
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MsgId = msg_id.c_str();
    po.MaxWait = 3000;
    jsPubAck* ack = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = js_Publish(&ack, js_, subject.c_str(), text.data(),
                              static_cast<int>(text.size()), &po, &jerr);
    jsPubAck_Destroy(ack);
    if (attempts != nullptr) *attempts = attempt;
    if (s == NATS_OK) return agentckpt::OkStatus();
    last = agentckpt::NatsErrorDetail(s) +
           (jerr != 0 ? " (JetStream error " + std::to_string(jerr) + ")" : "");
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return agentckpt::UnavailableError("feed: " + last);
}

agentckpt::StatusOr<ConsumerState> NatsObserver::Consumer(int retry_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(retry_ms);
  for (;;) {
    jsConsumerInfo* ci = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = js_GetConsumerInfo(&ci, js_, stream_.c_str(), agent_.c_str(), nullptr, &jerr);
    if (s == NATS_OK) {
      ConsumerState c;
      c.delivered_stream = ci->Delivered.Stream;
      c.ack_floor_stream = ci->AckFloor.Stream;
      c.num_pending = ci->NumPending;
      c.num_ack_pending = ci->NumAckPending;
      c.num_redelivered = ci->NumRedelivered;
      jsConsumerInfo_Destroy(ci);
      return c;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return agentckpt::UnavailableError(std::string("consumer info: ") + natsStatus_GetText(s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace chaos
