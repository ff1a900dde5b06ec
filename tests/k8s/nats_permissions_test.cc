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
#include "nats/nats_handles.h"
#include "replay/jetstream_replay.h"
#include "store/jetstream/jetstream_store.h"
#include "tests/store/store_test_util.h"
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
  // Nothing the replay sent was refused: each of its requests is flushed, so a refusal's -ERR
  // has come by now (the probe of the stream, $JS.API.STREAM.MSG.GET, among them).
  const char* text = nullptr;
  EXPECT_NE(natsConnection_GetLastError(agent.connection(), &text), NATS_NOT_PERMITTED)
      << (text == nullptr ? "" : text);
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
  agentckpt::nats_handles::UnsubscribeAndDestroy(nc.get(), sub);
}

// The JetStream store with the shipped permissions: the setup user provisions its streams, the
// agent's user writes and reads its own agent's checkpoints and journal and cannot write another
// agent's.
TEST_F(NatsPermissionsTest, AgentUserKeepsItsCheckpointsInTheJetStreamStore) {
  JetStreamStoreOptions setup;
  setup.api.servers = Url("agent-marketing-prod-setup", kSetupPassword);
  setup.create = true;
  auto created = JetStreamStore::Open(setup);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  created->reset();

  JetStreamStoreOptions options;
  options.api.servers = AgentUrl();
  options.api.request_timeout_ms = 500;
  options.api.retry_ms = 1000;
  auto store = JetStreamStore::Open(options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto lease = (*store)->AcquireLease(kAgent, "pod-1", 15000, 1'700'000'000'000);
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  const LeaseToken token{lease->holder, lease->epoch};
  auto entries = testing::JournalChain(kAgent, 1, 2, token.epoch);
  ASSERT_TRUE((*store)->AppendJournal(kAgent, entries, token).ok());
  for (int64_t seq = 1; seq <= 3; ++seq) {
    Checkpoint cp = testing::MakeCheckpoint(kAgent, seq);
    cp.journal = JournalPosition{entries.back().sequence, entries.back().sha256};
    PutOptions opts{2};
    opts.lease = token;
    opts.journal_compact_through = 1;
    auto put = (*store)->Put(testing::SealForTest(cp), opts);
    ASSERT_TRUE(put.ok()) << put.status().ToString();
  }
  auto latest = (*store)->GetLatestVerified(kAgent);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->checkpoint.sequence_number, 3);
  auto journal = (*store)->ReadJournal(kAgent, 0);
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  ASSERT_EQ(journal->size(), 1u);
  EXPECT_EQ(journal->front().sequence, 2);
  // The agent user may remove what retention and compaction drop: the pruned document and the
  // journal's fence mark below the entries still needed are gone from the streams.
  auto admin = JetStreamStore::Open(setup);
  ASSERT_TRUE(admin.ok()) << admin.status().ToString();
  auto documents = (*admin)->api()->StreamPlacement((*admin)->CheckpointsStream());
  ASSERT_TRUE(documents.ok()) << documents.status().ToString();
  EXPECT_EQ(documents->messages, 2u);
  auto journal_stream = (*admin)->api()->StreamPlacement((*admin)->JournalStream());
  ASSERT_TRUE(journal_stream.ok()) << journal_stream.status().ToString();
  EXPECT_EQ(journal_stream->messages, 1u);

  // Another agent's subjects are refused (the publish gets no acknowledgement).
  auto other =
      (*store)->Put(testing::SealForTest(testing::MakeCheckpoint("agent-other", 1)), PutOptions{});
  EXPECT_FALSE(other.ok());
  ConnectionPtr nc = Connect(AgentUrl());
  for (const char* subject :
       {"AGENTCKPT.agents.agent-other", "AGENTCKPT.journal.agent-other",
        "AGENTCKPT.ckpt.agent-other.x.y", "$JS.API.STREAM.DELETE.AGENTCKPT_AGENTS",
        "$JS.API.STREAM.CREATE.AGENTCKPT_AGENTS"}) {
    ConnectionPtr fresh = Connect(AgentUrl());
    EXPECT_TRUE(PublishRefused(fresh.get(), subject)) << subject;
  }
}

TEST_F(NatsPermissionsTest, FleetUserTriggersCheckpointsButCannotWriteToInboxes) {
  ConnectionPtr nc = Connect(Url("agentckpt-fleet", kFleetPassword));
  EXPECT_FALSE(PublishRefused(nc.get(), "agent.agent-marketing-prod.checkpoint.create"));
  ConnectionPtr fresh = Connect(Url("agentckpt-fleet", kFleetPassword));
  EXPECT_TRUE(PublishRefused(fresh.get(), "agent.agent-marketing-prod.inbox.task"));
}

}  // namespace
}  // namespace agentckpt
