#include "examples/demo_agent_nats.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "nats/nats_connect.h"
#include "nats/subjects.h"

namespace demo {
namespace {

void Check(natsStatus s, const char* what) {
  if (s == NATS_OK) return;
  std::fprintf(stderr, "demo_agent: %s: %s\n", what, natsStatus_GetText(s));
  std::exit(1);
}

std::string Now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  gmtime_r(&ts.tv_sec, &t);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%02d:%02d:%02d.%03ld", t.tm_hour, t.tm_min, t.tm_sec,
                ts.tv_nsec / 1000000);
  return buf;
}

}  // namespace

Nats::Nats(const std::string& url) {
  auto connected = agentckpt::ConnectNatsUrl(url);
  if (!connected.ok()) {
    std::fprintf(stderr, "demo_agent: connect to NATS: %s\n",
                 connected.status().ToString().c_str());
    std::exit(1);
  }
  nc_ = connected->release();
  Check(natsConnection_JetStream(&js_, nc_, nullptr), "JetStream context");
}

Nats::~Nats() {
  jsCtx_Destroy(js_);
  natsConnection_Destroy(nc_);
}

void Nats::SetupInbox(const std::string& stream, const std::string& agent) {
  jsStreamConfig sc;
  jsStreamConfig_Init(&sc);
  sc.Name = stream.c_str();
  const char* subjects[] = {"inbox.>"};
  sc.Subjects = subjects;
  sc.SubjectsLen = 1;
  sc.Storage = js_FileStorage;
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&si, js_, &sc, nullptr, &jerr);
  if (s != NATS_OK && jerr != JSStreamNameExistErr) Check(s, "create stream");
  jsStreamInfo_Destroy(si);

  std::string filter = "inbox." + agent + ".>";
  jsConsumerConfig cc;
  jsConsumerConfig_Init(&cc);
  cc.Durable = agent.c_str();
  cc.AckPolicy = js_AckExplicit;
  cc.FilterSubject = filter.c_str();
  jsConsumerInfo* ci = nullptr;
  s = js_AddConsumer(&ci, js_, stream.c_str(), &cc, nullptr, &jerr);
  if (s != NATS_OK && jerr != JSConsumerNameExistErr) Check(s, "create consumer");
  jsConsumerInfo_Destroy(ci);
}

void Nats::Publish(const std::string& agent, int count, const std::string& prefix) {
  std::string subject = "inbox." + agent + ".tasks";
  for (int i = 0; i < count; ++i) {
    std::string body = "{\"request\":\"" + prefix + " " + std::to_string(i + 1) + "\"}";
    jsPubAck* ack = nullptr;
    Check(js_Publish(&ack, js_, subject.c_str(), body.data(), static_cast<int>(body.size()),
                     nullptr, nullptr),
          "publish inbox message");
    jsPubAck_Destroy(ack);
  }
}

std::vector<InboxMessage> Nats::FetchAndAck(
    const std::string& stream, const std::string& agent, int max,
    const std::function<void(const InboxMessage&)>& handle) {
  std::vector<InboxMessage> out;
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Consumer = agent.c_str();
  natsSubscription* sub = nullptr;
  std::string filter = "inbox." + agent + ".>";
  Check(js_PullSubscribe(&sub, js_, filter.c_str(), agent.c_str(), nullptr, &so, nullptr),
        "bind to the durable consumer");
  natsMsgList list{};
  natsStatus s = natsSubscription_Fetch(&list, sub, max, 100, nullptr);
  if (s == NATS_OK) {
    for (int i = 0; i < list.Count; ++i) {
      natsMsg* m = list.Msgs[i];
      InboxMessage msg;
      jsMsgMetaData* meta = nullptr;
      if (natsMsg_GetMetaData(&meta, m) == NATS_OK) {
        msg.stream_sequence = meta->Sequence.Stream;
        jsMsgMetaData_Destroy(meta);
      }
      msg.subject = natsMsg_GetSubject(m);
      msg.data.assign(natsMsg_GetData(m), static_cast<size_t>(natsMsg_GetDataLength(m)));
      handle(msg);
      Check(natsMsg_AckSync(m, nullptr, nullptr), "ack");
      out.push_back(std::move(msg));
    }
    natsMsgList_Destroy(&list);
  } else if (s != NATS_TIMEOUT) {
    Check(s, "fetch");
  }
  natsSubscription_Unsubscribe(sub);
  natsSubscription_Destroy(sub);
  return out;
}

bool Nats::Watch(const std::string& agent, int seconds, const std::string& until_suffix) {
  natsSubscription* sub = nullptr;
  std::string subject = agentckpt::subjects::AgentAll(agent);
  Check(natsConnection_SubscribeSync(&sub, nc_, subject.c_str()), "subscribe");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  bool seen = false;
  while (!seen && std::chrono::steady_clock::now() < deadline) {
    natsMsg* m = nullptr;
    if (natsSubscription_NextMsg(&m, sub, 200) != NATS_OK) continue;
    std::string subj = natsMsg_GetSubject(m);
    std::printf("  %s  %-44s %.*s\n", Now().c_str(), subj.c_str(), natsMsg_GetDataLength(m),
                natsMsg_GetData(m));
    std::fflush(stdout);
    if (!until_suffix.empty() && subj.size() >= until_suffix.size() &&
        subj.compare(subj.size() - until_suffix.size(), until_suffix.size(), until_suffix) == 0) {
      seen = true;
    }
    natsMsg_Destroy(m);
  }
  natsSubscription_Destroy(sub);
  return seen;
}

}  // namespace demo
