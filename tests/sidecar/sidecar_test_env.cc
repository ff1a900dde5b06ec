#include "tests/sidecar/sidecar_test_env.h"

#include <signal.h>

#include <chrono>
#include <thread>

#include "nats/nats_connect.h"
#include "nats/nats_handles.h"
#include "nats/subjects.h"

namespace agentckpt::testing {

void SidecarEnvTest::SetUp() {
  nats_ = std::make_unique<NatsServerProcess>();
  auto js = JetStreamTestClient::Connect(nats_->url());
  ASSERT_TRUE(js.ok()) << js.status().ToString();
  js_ = std::move(js).value();
  ASSERT_TRUE(js_->CreateStream("INBOX", {"inbox.>"}).ok());
  ASSERT_TRUE(
      js_->CreateDurablePullConsumer("INBOX", "agent", std::string("inbox.") + kProcAgent + ".>")
          .ok());
  // A separate connection for events that reconnects quickly and forever (outage tests).
  auto opts = NewNatsOptions(nats_->url(), NatsAuthOptions{});
  ASSERT_TRUE(opts.ok()) << opts.status().ToString();
  natsOptions_SetMaxReconnect(opts->get(), -1);
  natsOptions_SetReconnectWait(opts->get(), 50);
  natsOptions_SetReconnectBufSize(opts->get(), 1 << 20);
  auto connected = ConnectWithOptions(opts->get(), nats_->url(), NatsAuthOptions{});
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  events_nc_ = connected->release();
  std::string subject = subjects::CheckpointAll(kProcAgent);
  ASSERT_EQ(natsConnection_SubscribeSync(&events_, events_nc_, subject.c_str()), NATS_OK);
  ASSERT_EQ(natsConnection_FlushTimeout(events_nc_, 2000), NATS_OK);
  port_ = PickFreePort();
}

void SidecarEnvTest::TearDown() {
  agentckpt::nats_handles::UnsubscribeAndDestroy(events_nc_, events_);
  if (events_nc_ != nullptr) {
    natsConnection_Close(events_nc_);
    natsConnection_Destroy(events_nc_);
  }
  js_.reset();
  nats_.reset();
}

std::map<std::string, std::string> SidecarEnvTest::SidecarEnv(
    const std::map<std::string, std::string>& overrides) const {
  std::map<std::string, std::string> env = {
      {"AGENT_ID", kProcAgent},
      {"NATS_URL", nats_->url()},
      {"CKPT_STORE", "sqlite://" + dir_.File("store.db")},
      {"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(port_)},
      {"JS_STREAM", "INBOX"},
      {"JS_CONSUMER", "agent"},
      {"CKPT_PERIOD_S", "3600"},
      {"CKPT_RESTORE_ON_START", "false"},
      {"CKPT_NATS_RECONNECT_WAIT_MS", "200"},
  };
  for (const auto& [k, v] : overrides) env[k] = v;
  return env;
}

std::unique_ptr<SidecarProcess> SidecarEnvTest::StartSidecar(
    const std::map<std::string, std::string>& overrides) {
  auto p = std::make_unique<SidecarProcess>(SidecarEnv(overrides), dir_.path());
  bool healthy = p->WaitHealthy(port_);
  EXPECT_TRUE(healthy) << p->Describe();
  return p;
}

HttpReply SidecarEnvTest::WaitReadyz(int status) {
  HttpReply r;
  for (int i = 0; i < 200; ++i) {
    r = HttpCall(port_, "GET", "/readyz");
    if (r.status == status) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return r;
}

std::string SidecarEnvTest::PutUntilAcknowledged(const std::string& prefix) {
  nlohmann::json context = nlohmann::json::parse(FixtureContextBody("checkpoint-16k.json"));
  for (int i = 0; i < 600; ++i) {
    const std::string title = prefix + std::to_string(i);
    context["activeTask"]["title"] = title;
    if (HttpCall(port_, "PUT", "/v1/context", context.dump()).status == 200) return title;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "";
}

void SidecarEnvTest::ExpectRestartRestoresTitle(SidecarProcess* running,
                                                const std::map<std::string, std::string>& overrides,
                                                const std::string& title) {
  EXPECT_EQ(running->Signal(SIGKILL), 128 + SIGKILL);
  auto restarted = StartSidecar(overrides);
  const HttpReply restored = HttpCall(port_, "GET", "/v1/context");
  ASSERT_EQ(restored.status, 200) << restored.body << restarted->Describe();
  EXPECT_EQ(nlohmann::json::parse(restored.body)["activeTask"]["title"], title) << restored.body;
  EXPECT_EQ(restarted->Signal(SIGTERM, 30000), 0) << restarted->Describe();
}

std::unique_ptr<CheckpointStore> SidecarEnvTest::OpenTestStore() const {
  auto store = OpenStore("sqlite://" + dir_.File("store.db"));
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

std::vector<CheckpointInfo> SidecarEnvTest::ListCheckpoints() const {
  auto store = OpenTestStore();
  if (!store) return {};
  auto list = store->List(kProcAgent, 1000);
  EXPECT_TRUE(list.ok()) << list.status().ToString();
  return list.ok() ? *list : std::vector<CheckpointInfo>{};
}

nlohmann::json SidecarEnvTest::NextEvent(int timeout_ms) {
  natsMsg* msg = nullptr;
  while (true) {
    if (natsSubscription_NextMsg(&msg, events_, timeout_ms) != NATS_OK) return nullptr;
    std::string subject = natsMsg_GetSubject(msg);
    // Requests (checkpoint.create / checkpoint.restore) share the prefix; skip them.
    if (subject.size() > 7 && (subject.compare(subject.size() - 7, 7, ".create") == 0 ||
                               subject.compare(subject.size() - 8, 8, ".restore") == 0)) {
      natsMsg_Destroy(msg);
      continue;
    }
    break;
  }
  nlohmann::json out = {
      {"subject", natsMsg_GetSubject(msg)},
      {"data", nlohmann::json::parse(std::string(natsMsg_GetData(msg),
                                                 static_cast<size_t>(natsMsg_GetDataLength(msg))),
                                     nullptr, false)}};
  const char* traceparent = nullptr;
  if (natsMsgHeader_Get(msg, "traceparent", &traceparent) == NATS_OK && traceparent != nullptr) {
    out["traceparent"] = traceparent;
  }
  natsMsg_Destroy(msg);
  return out;
}

nlohmann::json SidecarEnvTest::Request(const std::string& subject, const std::string& body,
                                       int timeout_ms) {
  natsMsg* reply = nullptr;
  if (natsConnection_RequestString(&reply, events_nc_, subject.c_str(), body.c_str(), timeout_ms) !=
      NATS_OK) {
    return nullptr;
  }
  auto out = nlohmann::json::parse(
      std::string(natsMsg_GetData(reply), static_cast<size_t>(natsMsg_GetDataLength(reply))),
      nullptr, false);
  natsMsg_Destroy(reply);
  return out;
}

}  // namespace agentckpt::testing
