#include "bench/chaos/effect_sink.h"

#include <nlohmann/json.hpp>

#include "bench/chaos/nats_observer.h"
#include "examples/reference_agent/effect_sink.h"
#include "examples/reference_agent/probe_log.h"
#include "nats/nats_connect.h"

namespace chaos {

using nlohmann::json;

EffectSink::~EffectSink() {
  // Connections closed first: a close waits for the read loop, which nats.c 3.4 can otherwise
  // have in the middle of a message for a subscription as it is freed (nats/nats_handles.h).
  for (natsConnection* nc : ncs_) natsConnection_Close(nc);
  for (natsSubscription* sub : subs_) natsSubscription_Destroy(sub);
  for (natsConnection* nc : ncs_) natsConnection_Destroy(nc);
}

agentckpt::Status EffectSink::Start(const std::vector<std::string>& urls,
                                    const std::string& agent) {
  const std::string filter = reference_agent::SinkFilter(agent);
  for (const std::string& url : urls) {
    auto connected = ConnectHarness(url, /*pinned=*/true);
    if (!connected.ok()) {
      return agentckpt::UnavailableError("sink: " + connected.status().message());
    }
    natsConnection* nc = *connected;
    ncs_.push_back(nc);
    natsSubscription* sub = nullptr;
    natsStatus s = natsConnection_QueueSubscribe(&sub, nc, filter.c_str(), "chaos-sink",
                                                 &EffectSink::OnMessage, this);
    if (s == NATS_OK) subs_.push_back(sub);
    if (s == NATS_OK) s = natsSubscription_SetPendingLimits(sub, -1, -1);
    if (s == NATS_OK) s = natsConnection_Flush(nc);
    if (s != NATS_OK) {
      return agentckpt::UnavailableError(std::string("sink: subscribe: ") + natsStatus_GetText(s));
    }
  }
  return agentckpt::OkStatus();
}

void EffectSink::OnMessage(natsConnection* nc, natsSubscription*, natsMsg* msg, void* closure) {
  auto* self = static_cast<EffectSink*>(closure);
  const std::string subject = natsMsg_GetSubject(msg);
  const char* data = natsMsg_GetData(msg);
  json request = json::parse(data, data + natsMsg_GetDataLength(msg), nullptr, false);
  const std::string key = request.is_object() ? request.value("key", "") : "";
  json reply = {{"error", "bad request"}};
  if (!key.empty()) {
    std::lock_guard<std::mutex> lock(self->mu_);
    int& count = self->count_[key];
    if (subject.size() > 5 && subject.compare(subject.size() - 5, 5, ".exec") == 0) {
      ++count;
      self->new_.push_back(
          Execution{reference_agent::WallMillis(), key, request.value("seq", uint64_t{0}), count});
      reply = {{"executions", count}};
    } else {
      reply = {{"executed", count > 0}};
    }
  }
  const char* reply_to = natsMsg_GetReply(msg);
  if (reply_to != nullptr) {
    const std::string text = reply.dump();
    natsConnection_Publish(nc, reply_to, text.data(), static_cast<int>(text.size()));
  }
  natsMsg_Destroy(msg);
}

std::vector<EffectSink::Execution> EffectSink::TakeNew() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Execution> out;
  out.swap(new_);
  return out;
}

}  // namespace chaos
