#include "examples/reference_agent/agent_inbox.h"

#include <chrono>
#include <thread>

#include "nats/nats_connect.h"

namespace reference_agent {
namespace {

using agentckpt::Status;
using agentckpt::StatusOr;

Status FromNats(natsStatus s, const std::string& what) {
  if (s == NATS_OK) return agentckpt::OkStatus();
  std::string text = what + ": " + natsStatus_GetText(s);
  if (s == NATS_NO_SERVER || s == NATS_CONNECTION_CLOSED || s == NATS_TIMEOUT ||
      s == NATS_CONNECTION_DISCONNECTED || s == NATS_STALE_CONNECTION) {
    return agentckpt::UnavailableError(text);
  }
  return agentckpt::InternalError(text);
}

}  // namespace

std::string InboxFilter(const std::string& agent) { return "inbox." + agent + ".>"; }
std::string InboxSubject(const std::string& agent) { return "inbox." + agent + ".tasks"; }

Status SetupInbox(natsConnection* nc, const std::string& stream, const std::string& agent,
                  int64_t ack_wait_ms) {
  jsCtx* js = nullptr;
  Status st = FromNats(natsConnection_JetStream(&js, nc, nullptr), "JetStream context");
  if (!st.ok()) return st;
  jsStreamConfig sc;
  jsStreamConfig_Init(&sc);
  sc.Name = stream.c_str();
  const char* subjects[] = {"inbox.>"};
  sc.Subjects = subjects;
  sc.SubjectsLen = 1;
  sc.Storage = js_FileStorage;
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&si, js, &sc, nullptr, &jerr);
  jsStreamInfo_Destroy(si);
  if (s != NATS_OK && jerr != JSStreamNameExistErr) {
    jsCtx_Destroy(js);
    return FromNats(s, "create stream " + stream);
  }
  std::string filter = InboxFilter(agent);
  jsConsumerConfig cc;
  jsConsumerConfig_Init(&cc);
  cc.Durable = agent.c_str();
  cc.AckPolicy = js_AckExplicit;
  cc.AckWait = ack_wait_ms * 1000000;  // nanoseconds
  cc.FilterSubject = filter.c_str();
  jsConsumerInfo* ci = nullptr;
  s = js_AddConsumer(&ci, js, stream.c_str(), &cc, nullptr, &jerr);
  jsConsumerInfo_Destroy(ci);
  jsCtx_Destroy(js);
  if (s != NATS_OK && jerr != JSConsumerNameExistErr) {
    return FromNats(s, "create consumer " + agent);
  }
  return agentckpt::OkStatus();
}

StatusOr<std::unique_ptr<AgentInbox>> AgentInbox::Open(const std::string& nats_url,
                                                       const std::string& stream,
                                                       const std::string& agent,
                                                       int connect_timeout_ms) {
  std::unique_ptr<AgentInbox> in(new AgentInbox());
  in->agent_ = agent;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(connect_timeout_ms);
  auto connected = agentckpt::ConnectNatsUrl(nats_url);
  while (!connected.ok()) {
    if (std::chrono::steady_clock::now() > deadline) return connected.status();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    connected = agentckpt::ConnectNatsUrl(nats_url);
  }
  in->nc_ = connected->release();
  Status st = FromNats(natsConnection_JetStream(&in->js_, in->nc_, nullptr), "JetStream context");
  if (!st.ok()) return st;
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Consumer = agent.c_str();
  std::string filter = InboxFilter(agent);
  // The bind asks the cluster for the consumer's info. nats.c binds anyway when that request
  // times out, but an error answer ends the bind, for example "JetStream cluster not available"
  // while the consumer's replicas elect a leader. That passes in seconds, so the bind is tried
  // again within the same deadline. The durable exists before any agent starts (SetupInbox): a
  // failure that lasts to the deadline is returned as it is.
  for (;;) {
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s =
        js_PullSubscribe(&in->sub_, in->js_, filter.c_str(), agent.c_str(), nullptr, &so, &jerr);
    if (s == NATS_OK) return in;
    st = FromNats(
        s, "bind to durable " + agent +
               (jerr != 0 ? " (JetStream error " + std::to_string(jerr) + ")" : std::string()));
    if (std::chrono::steady_clock::now() > deadline) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

AgentInbox::~AgentInbox() {
  // Closed first: the close waits for the read loop, which nats.c 3.4 can otherwise have in the
  // middle of a message for the subscription as it is freed (nats/nats_handles.h).
  natsConnection_Close(nc_);
  natsSubscription_Destroy(sub_);
  jsCtx_Destroy(js_);
  natsConnection_Destroy(nc_);
}

StatusOr<std::vector<InboxMessage>> AgentInbox::Fetch(int max, int wait_ms) {
  std::vector<InboxMessage> out;
  natsMsgList list{};
  natsStatus s = natsSubscription_Fetch(&list, sub_, max, wait_ms, nullptr);
  if (s == NATS_TIMEOUT) return out;
  if (s != NATS_OK) return FromNats(s, "fetch");
  for (int i = 0; i < list.Count; ++i) {
    InboxMessage m;
    m.msg = list.Msgs[i];
    list.Msgs[i] = nullptr;
    jsMsgMetaData* meta = nullptr;
    if (natsMsg_GetMetaData(&meta, m.msg) == NATS_OK) {
      m.stream_sequence = meta->Sequence.Stream;
      jsMsgMetaData_Destroy(meta);
    }
    m.data.assign(natsMsg_GetData(m.msg), static_cast<size_t>(natsMsg_GetDataLength(m.msg)));
    out.push_back(std::move(m));
  }
  natsMsgList_Destroy(&list);
  return out;
}

Status AgentInbox::Ack(InboxMessage& m) {
  Status st = FromNats(natsMsg_AckSync(m.msg, nullptr, nullptr), "ack");
  Release(m);
  return st;
}

void AgentInbox::Release(InboxMessage& m) {
  natsMsg_Destroy(m.msg);
  m.msg = nullptr;
}

}  // namespace reference_agent
