// NatsClusterProcess against real nats-server processes: an R3 file stream keeps an acknowledged
// message, a client of the cluster URL list publishes again once the stream leader is killed
// (and the message is still there), and the killed server rejoins as a current replica after
// Restart().
#include "tests/support/nats_cluster.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include "common/status_macros.h"
#include "nats/nats_connect.h"
#include "nats/nats_handles.h"

namespace agentckpt::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kStream[] = "CLUSTER_TEST";
constexpr char kSubject[] = "cluster.test";

struct Client {
  nats_handles::ConnectionPtr nc;
  nats_handles::JsCtxPtr js;
};

std::string NatsText(natsStatus s, jsErrCode jerr) {
  std::string text = natsStatus_GetText(s);
  if (jerr != 0) text += " (JetStream error " + std::to_string(jerr) + ")";
  return text;
}

// A client as an application has one: every server in `url`, reconnecting to another server
// (every 50 ms) when its own goes away.
StatusOr<Client> ConnectCluster(const std::string& url) {
  ASSIGN_OR_RETURN(nats_handles::OptionsPtr opts, NewClusterNatsOptions(url));
  natsOptions_SetReconnectWait(opts.get(), 50);
  natsOptions_SetMaxReconnect(opts.get(), 1000);
  natsOptions_SetTimeout(opts.get(), 2000);
  natsConnection* raw = nullptr;
  natsStatus s = natsConnection_Connect(&raw, opts.get());
  nats_handles::ConnectionPtr nc(raw);
  if (s != NATS_OK) return UnavailableError("connect to " + url + ": " + NatsText(s, jsErrCode(0)));
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 2000;
  jsCtx* js = nullptr;
  s = natsConnection_JetStream(&js, nc.get(), &jo);
  if (s != NATS_OK) return UnavailableError("JetStream context: " + NatsText(s, jsErrCode(0)));
  return Client{std::move(nc), nats_handles::JsCtxPtr(js)};
}

Status CreateR3FileStream(jsCtx* js) {
  const char* subjects[] = {kSubject};
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = kStream;
  config.Subjects = subjects;
  config.SubjectsLen = 1;
  config.Storage = js_FileStorage;
  config.Replicas = 3;
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 5000;
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = jsErrCode(0);
  natsStatus s = js_AddStream(&si, js, &config, &jo, &jerr);
  jsStreamInfo_Destroy(si);
  if (s != NATS_OK) return UnavailableError("create stream: " + NatsText(s, jerr));
  return OkStatus();
}

// One publish waiting `wait_ms` for the JetStream ack. The message id makes a publish that is
// retried after a lost ack store the message once.
StatusOr<uint64_t> PublishOnce(jsCtx* js, const std::string& body, const std::string& msg_id,
                               int64_t wait_ms) {
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = wait_ms;
  po.MsgId = msg_id.c_str();
  jsPubAck* ack = nullptr;
  jsErrCode jerr = jsErrCode(0);
  natsStatus s =
      js_Publish(&ack, js, kSubject, body.data(), static_cast<int>(body.size()), &po, &jerr);
  if (s != NATS_OK) {
    jsPubAck_Destroy(ack);
    return UnavailableError(NatsText(s, jerr));
  }
  uint64_t seq = ack->Sequence;
  jsPubAck_Destroy(ack);
  return seq;
}

StatusOr<std::string> ReadMessage(jsCtx* js, uint64_t seq) {
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 2000;
  natsMsg* raw = nullptr;
  jsErrCode jerr = jsErrCode(0);
  natsStatus s = js_GetMsg(&raw, js, kStream, seq, &jo, &jerr);
  nats_handles::MsgPtr msg(raw);
  if (s != NATS_OK) return UnavailableError("get message: " + NatsText(s, jerr));
  return std::string(natsMsg_GetData(msg.get()), natsMsg_GetDataLength(msg.get()));
}

TEST(NatsClusterTest, ReplicatedFileStreamKeepsAcknowledgedMessage) {
  NatsClusterProcess cluster;
  ASSERT_EQ(cluster.size(), 3);
  for (int i = 0; i < cluster.size(); ++i) {
    EXPECT_TRUE(cluster.running(i));
    EXPECT_GT(cluster.pid(i), 0);
    // Each server accepts clients on its own.
    StatusOr<nats_handles::ConnectionPtr> one = ConnectNatsOnce(cluster.url(i), {}, "probe", 2000);
    EXPECT_TRUE(one.ok()) << cluster.url(i) << ": " << one.status().ToString();
  }
  // natsConnection_ConnectTo takes the comma list as it is.
  natsConnection* raw = nullptr;
  natsStatus s = natsConnection_ConnectTo(&raw, cluster.url().c_str());
  nats_handles::ConnectionPtr to(raw);
  EXPECT_EQ(s, NATS_OK) << cluster.url() << ": " << natsStatus_GetText(s);

  StatusOr<Client> client = ConnectCluster(cluster.url());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  Status created = CreateR3FileStream(client->js.get());
  ASSERT_TRUE(created.ok()) << created.ToString();
  Status healthy = cluster.WaitForStreamHealthy(kStream, 3, 10000);
  ASSERT_TRUE(healthy.ok()) << healthy.ToString();
  EXPECT_EQ(cluster.WaitForStreamHealthy(kStream, 1, 1000).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(cluster.StreamLeader("NO_SUCH_STREAM").status().code(), StatusCode::kNotFound);
  StatusOr<int> leader = cluster.StreamLeader(kStream);
  ASSERT_TRUE(leader.ok()) << leader.status().ToString();
  EXPECT_GE(*leader, 0);
  EXPECT_LT(*leader, 3);

  StatusOr<uint64_t> seq = PublishOnce(client->js.get(), "first", "m1", 5000);
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_EQ(*seq, 1u);
  StatusOr<std::string> body = ReadMessage(client->js.get(), 1);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, "first");
}

TEST(NatsClusterTest, PublishRecoversAfterLeaderKillAndNodeRejoinsAfterRestart) {
  NatsClusterProcess cluster;
  StatusOr<Client> client = ConnectCluster(cluster.url());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  Status created = CreateR3FileStream(client->js.get());
  ASSERT_TRUE(created.ok()) << created.ToString();
  StatusOr<uint64_t> first = PublishOnce(client->js.get(), "before", "m1", 5000);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(*first, 1u);
  // Before the kill every replica has the message (the ack only needs a quorum).
  Status healthy = cluster.WaitForStreamHealthy(kStream, 3, 10000);
  ASSERT_TRUE(healthy.ok()) << healthy.ToString();

  StatusOr<int> leader = cluster.StreamLeader(kStream);
  ASSERT_TRUE(leader.ok()) << leader.status().ToString();
  const int killed = *leader;
  cluster.Kill(killed);
  EXPECT_FALSE(cluster.running(killed));
  EXPECT_EQ(cluster.pid(killed), -1);

  // The remaining two elect a new stream leader; until then publishes fail. Bounded by a
  // deadline; each failure is counted by what nats.c returned.
  const auto kill_time = Clock::now();
  const auto deadline = kill_time + std::chrono::seconds(20);
  std::map<std::string, int> failures;
  StatusOr<uint64_t> second = UnavailableError("not published");
  while (Clock::now() < deadline) {
    second = PublishOnce(client->js.get(), "after", "m2", 1000);
    if (second.ok()) break;
    ++failures[second.status().message()];
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto failover_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - kill_time).count();
  std::string seen;
  for (const auto& [what, count] : failures) seen += what + " x" + std::to_string(count) + "; ";
  std::printf("publish recovered %lld ms after killing leader n%d; failures: %s\n",
              static_cast<long long>(failover_ms), killed + 1, seen.c_str());
  RecordProperty("failover_ms", std::to_string(failover_ms));
  ASSERT_TRUE(second.ok()) << "no publish within 20 s of the kill; failures: " << seen;
  EXPECT_EQ(*second, 2u);  // the message id keeps a retried publish from storing twice

  StatusOr<int> new_leader = cluster.StreamLeader(kStream);
  ASSERT_TRUE(new_leader.ok()) << new_leader.status().ToString();
  EXPECT_NE(*new_leader, killed);
  StatusOr<std::string> before = ReadMessage(client->js.get(), 1);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_EQ(*before, "before");
  StatusOr<std::string> after = ReadMessage(client->js.get(), 2);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(*after, "after");

  // The killed server comes back on its ports and store and catches up as a replica.
  const pid_t old_pid = cluster.pid(*new_leader);
  cluster.Restart(killed);
  EXPECT_TRUE(cluster.running(killed));
  EXPECT_EQ(cluster.pid(*new_leader), old_pid);
  const auto restart_time = Clock::now();
  healthy = cluster.WaitForStreamHealthy(kStream, 3, 20000);
  ASSERT_TRUE(healthy.ok()) << healthy.ToString();
  std::printf("stream healthy with 3 replicas %lld ms after restarting n%d\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - restart_time)
                      .count()),
              killed + 1);
}

}  // namespace
}  // namespace agentckpt::testing
