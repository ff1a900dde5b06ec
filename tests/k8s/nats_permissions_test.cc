// The NATS account configuration shipped in k8s/nats/agent-permissions.conf, loaded into a real
// nats-server: the setup user can create the agent's stream and consumer (and nothing else), the
// agent's user can do everything the agent and its sidecar do (publish events, pull and ack its
// inbox, replay after a checkpoint) and nothing outside agent.{its id}.> and its own stream.
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <stdlib.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>

#include "cli/setup_stream.h"
#include "nats/nats_connect.h"
#include "replay/jetstream_replay.h"
#include "tests/support/jetstream_fixture.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

using testing::JetStreamTestClient;
using testing::NatsServerProcess;
using testing::TempDir;

constexpr char kAgent[] = "agent-marketing-prod";
constexpr char kStream[] = "AGENT_agent-marketing-prod";
constexpr char kAgentPassword[] = "agent-pw";
constexpr char kSetupPassword[] = "setup-pw";
constexpr char kFleetPassword[] = "fleet-pw";

// Writes a server configuration that includes the shipped file and returns "-c PATH". The
// passwords are taken from the environment, as in a pod fed by a Secret.
std::string ServerArgs(const TempDir& dir) {
  std::ifstream in(K8S_NATS_PERMISSIONS_CONF);
  EXPECT_TRUE(in.good()) << K8S_NATS_PERMISSIONS_CONF;
  std::stringstream text;
  text << in.rdbuf();
  std::ofstream(dir.File("agent-permissions.conf")) << text.str();
  std::ofstream(dir.File("server.conf")) << "include \"agent-permissions.conf\"\n";
  ::setenv("AGENT_MARKETING_PROD_NATS_PASSWORD", kAgentPassword, 1);
  ::setenv("AGENT_MARKETING_PROD_SETUP_NATS_PASSWORD", kSetupPassword, 1);
  ::setenv("AGENTCKPT_FLEET_NATS_PASSWORD", kFleetPassword, 1);
  return "-c " + dir.File("server.conf");
}

using nats_handles::ConnectionPtr;

class NatsPermissionsTest : public ::testing::Test {
 protected:
  NatsPermissionsTest() : server_(ServerArgs(conf_dir_)) {}

  std::string Url(const std::string& user, const std::string& password) const {
    return "nats://" + user + ":" + password + "@127.0.0.1:" + std::to_string(server_.port());
  }
  std::string AgentUrl() const { return Url(kAgent, kAgentPassword); }

  ConnectionPtr Connect(const std::string& url) {
    auto connected = ConnectNatsUrl(url);
    EXPECT_TRUE(connected.ok()) << url << ": " << connected.status().ToString();
    return connected.ok() ? std::move(connected).value() : nullptr;
  }

  SetupStreamOptions Setup(const std::string& user, const std::string& password) const {
    SetupStreamOptions o;
    o.nats_url = "nats://127.0.0.1:" + std::to_string(server_.port());
    o.agent_id = kAgent;
    o.stream = kStream;
    o.consumer = kAgent;
    o.user = user;
    o.password = password;
    o.timeout_ms = 1000;
    return o;
  }

  // Publishes on `subject` and reports whether the server refused it. The server answers a
  // refused publish with -ERR before the PONG of the flush, so the answer is final here.
  static bool PublishRefused(natsConnection* nc, const std::string& subject) {
    natsConnection_PublishString(nc, subject.c_str(), "{}");
    natsConnection_Flush(nc);
    const char* text = nullptr;
    natsStatus last = natsConnection_GetLastError(nc, &text);
    return last == NATS_NOT_PERMITTED && text != nullptr &&
           std::string(text).find(subject) != std::string::npos;
  }

  TempDir conf_dir_;
  NatsServerProcess server_;
};

TEST_F(NatsPermissionsTest, SetupUserCreatesTheStreamAndConsumerIdempotently) {
  SetupStreamReport report;
  Status s = SetupStream(Setup("agent-marketing-prod-setup", kSetupPassword), &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(report.stream_created);
  EXPECT_TRUE(report.consumer_created);
  s = SetupStream(Setup("agent-marketing-prod-setup", kSetupPassword), &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(report.stream_created);
}

TEST_F(NatsPermissionsTest, SetupUserMayNotTouchAnyOtherStreamNorPublishMessages) {
  SetupStreamOptions o = Setup("agent-marketing-prod-setup", kSetupPassword);
  o.stream = "AGENT_other";
  Status s = SetupStream(o);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  ConnectionPtr nc = Connect(Url("agent-marketing-prod-setup", kSetupPassword));
  EXPECT_TRUE(PublishRefused(nc.get(), "agent.agent-marketing-prod.inbox.task"));
}

TEST_F(NatsPermissionsTest, AgentUserMayNotCreateItsStream) {
  Status s = SetupStream(Setup(kAgent, kAgentPassword));
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
}

TEST_F(NatsPermissionsTest, AgentUserDoesWhatTheAgentAndSidecarNeed) {
  ASSERT_TRUE(SetupStream(Setup("agent-marketing-prod-setup", kSetupPassword)).ok());
  auto client = JetStreamTestClient::Connect(AgentUrl());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  JetStreamTestClient& agent = **client;

  // Someone sends the agent work; the agent pulls and acks the first two messages.
  auto seqs = agent.PublishN("agent.agent-marketing-prod.inbox.task", 4, "task-");
  ASSERT_TRUE(seqs.ok()) << seqs.status().ToString();
  auto acked = agent.FetchAndAckThrough(kStream, kAgent, (*seqs)[1]);
  ASSERT_TRUE(acked.ok()) << acked.status().ToString();
  EXPECT_EQ(*acked, 2);

  // The sidecar reads the consumer's position for a checkpoint and publishes its events.
  auto consumer = agent.SnapshotConsumer(kStream, kAgent);
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  EXPECT_EQ(consumer->ack_floor_stream_seq, (*seqs)[1]);
  EXPECT_FALSE(PublishRefused(agent.connection(), "agent.agent-marketing-prod.checkpoint.created"));

  // After a crash it replays everything after the checkpoint's position (sequence 1).
  JetStreamReplaySource replay(agent.connection(), std::chrono::seconds(5));
  NatsPosition position{kStream, kAgent, (*seqs)[0], 3};
  auto result = replay.ReadSince(position, 50, 4096);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->messages.size(), 3u);
  EXPECT_EQ(result->handled_count, 1u);
  EXPECT_EQ(result->pending_count, 2u);
}

TEST_F(NatsPermissionsTest, AgentUserStaysInsideItsSubjectsAndStream) {
  ASSERT_TRUE(SetupStream(Setup("agent-marketing-prod-setup", kSetupPassword)).ok());
  ConnectionPtr nc = Connect(AgentUrl());
  for (const char* subject :
       {"agent.agent-other.inbox.task", "agent.agent-other.checkpoint.create",
        "$JS.API.STREAM.INFO.AGENT_other", "$JS.API.STREAM.CREATE.AGENT_agent-marketing-prod",
        "$JS.API.STREAM.DELETE.AGENT_agent-marketing-prod",
        "$JS.API.STREAM.PURGE.AGENT_agent-marketing-prod",
        "$JS.API.CONSUMER.DELETE.AGENT_agent-marketing-prod.agent-marketing-prod",
        "$JS.API.CONSUMER.DURABLE.CREATE.AGENT_agent-marketing-prod.agent-marketing-prod",
        "$JS.API.CONSUMER.MSG.NEXT.AGENT_other.agent-other"}) {
    ConnectionPtr fresh = Connect(AgentUrl());
    EXPECT_TRUE(PublishRefused(fresh.get(), subject)) << subject;
  }
  natsSubscription* sub = nullptr;
  EXPECT_EQ(natsConnection_SubscribeSync(&sub, nc.get(), "agent.agent-other.>"), NATS_OK);
  natsConnection_Flush(nc.get());
  const char* text = nullptr;
  EXPECT_EQ(natsConnection_GetLastError(nc.get(), &text), NATS_NOT_PERMITTED);
  EXPECT_NE(std::string(text == nullptr ? "" : text).find("Subscription"), std::string::npos);
  natsSubscription_Destroy(sub);
}

TEST_F(NatsPermissionsTest, FleetUserTriggersCheckpointsButCannotWriteToInboxes) {
  ConnectionPtr nc = Connect(Url("agentckpt-fleet", kFleetPassword));
  EXPECT_FALSE(PublishRefused(nc.get(), "agent.agent-marketing-prod.checkpoint.create"));
  ConnectionPtr fresh = Connect(Url("agentckpt-fleet", kFleetPassword));
  EXPECT_TRUE(PublishRefused(fresh.get(), "agent.agent-marketing-prod.inbox.task"));
}

}  // namespace
}  // namespace agentckpt
