// `agentckpt restore --dry-run`, run as the real binary against a real SQLite store and a real
// nats-server with the agent's JetStream inbox: it prints the prompt and the phase timings,
// publishes nothing, leaves the durable consumer and the store exactly as they were.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include "checkpoint/canonical.h"
#include "common/env.h"
#include "nats/nats_connect.h"
#include "nats/nats_handles.h"
#include "nats/subjects.h"
#include "restore/token_counter.h"
#include "store/checkpoint_store.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/fixtures.h"
#include "tests/support/jetstream_fixture.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

constexpr char kAgent[] = "agent-dry";
constexpr char kStream[] = "AGENT_agent-dry";
constexpr char kConsumer[] = "agent-dry";
constexpr char kInbox[] = "agent.agent-dry.inbox.tasks";

class CliRestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto js = JetStreamTestClient::Connect(nats_.url());
    ASSERT_TRUE(js.ok()) << js.status().ToString();
    js_ = std::move(js).value();
    ASSERT_TRUE(js_->CreateStream(kStream, {"agent.agent-dry.inbox.>"}).ok());
    ASSERT_TRUE(js_->CreateDurablePullConsumer(kStream, kConsumer, "agent.agent-dry.inbox.>").ok());
    // Before the checkpoint: 2 messages, both handled.
    ASSERT_TRUE(js_->PublishN(kInbox, 2, "before checkpoint ").ok());
    ASSERT_TRUE(js_->FetchAndAckThrough(kStream, kConsumer, 2).ok());
    auto store = OpenStore(Url());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    Checkpoint cp = MakeCheckpoint(kAgent, 1);
    cp.timestamp_ms = Env::Default()->NowUnixMillis() - 90'000;
    cp.nats_position = NatsPosition{kStream, kConsumer, 2, 0};
    auto sealed = Seal(cp);
    ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
    ASSERT_TRUE(store_->Put(*sealed, PutOptions{}).ok());
    checkpoint_id_ = sealed->doc.checkpoint_id;
    ASSERT_TRUE(store_->SetAgentStatus(kAgent, "active", 1793760000000).ok());
    // After it: 5 more; the agent handled one (seq 3) and holds one unacked (seq 4).
    ASSERT_TRUE(js_->PublishN(kInbox, 5, "since checkpoint ").ok());
    ASSERT_TRUE(js_->FetchAndAckThrough(kStream, kConsumer, 3).ok());
    ASSERT_TRUE(js_->FetchWithoutAck(kStream, kConsumer, 1).ok());
  }

  std::string Url() const { return "sqlite://" + dir_.File("store.db"); }
  std::vector<std::string> Args(std::vector<std::string> extra) const {
    std::vector<std::string> args = {"restore", "--agent", kAgent, "--store", Url()};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  NatsServerProcess nats_;
  std::unique_ptr<JetStreamTestClient> js_;
  TempDir dir_;
  std::unique_ptr<CheckpointStore> store_;
  std::string checkpoint_id_;
};

TEST_F(CliRestoreTest, DryRunPrintsThePromptAndChangesNothing) {
  // A watcher on everything the agent's subjects carry.
  auto connected = ConnectNatsUrl(nats_.url());
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  natsConnection* watcher = connected->release();
  natsSubscription* sub = nullptr;
  ASSERT_EQ(natsConnection_SubscribeSync(&sub, watcher, subjects::AgentAll("agent-dry").c_str()),
            NATS_OK);
  ASSERT_EQ(natsConnection_FlushTimeout(watcher, 2000), NATS_OK);
  auto consumer_before = js_->SnapshotConsumer(kStream, kConsumer);
  auto stream_before = js_->SnapshotStream(kStream);
  ASSERT_TRUE(consumer_before.ok() && stream_before.ok());
  auto list_before = store_->List(kAgent, 100);
  auto agent_before = store_->GetAgent(kAgent);
  ASSERT_TRUE(list_before.ok() && agent_before.ok());

  CliResult r = RunCli(Args({"--dry-run", "--nats", nats_.url(), "--json"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  nlohmann::json j = r.Json();
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["dryRun"], true);
  EXPECT_EQ(j["coldStart"], false);
  EXPECT_EQ(j["checkpointId"], checkpoint_id_);
  EXPECT_EQ(j["handled"], 1);
  EXPECT_EQ(j["pending"], 4);
  EXPECT_EQ(j["replayed"], 5);
  EXPECT_EQ(j["truncated"], 0);
  EXPECT_FALSE(j.contains("replayError")) << j.dump(2);
  EXPECT_GT(j["promptTokens"].get<int>(), 0);
  EXPECT_GE(j["totalMs"].get<double>(), j["replayMs"].get<double>());
  const std::string prompt = j["prompt"];
  EXPECT_NE(prompt.find("since checkpoint 5"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("Write a post"), std::string::npos) << prompt;

  // Nothing published on the agent's subjects (the CLI has exited: all it sent has arrived).
  ASSERT_EQ(natsConnection_FlushTimeout(watcher, 2000), NATS_OK);
  natsMsg* msg = nullptr;
  EXPECT_EQ(natsSubscription_NextMsg(&msg, sub, 200), NATS_TIMEOUT)
      << (msg ? natsMsg_GetSubject(msg) : "");
  if (msg != nullptr) natsMsg_Destroy(msg);
  agentckpt::nats_handles::UnsubscribeAndDestroy(watcher, sub);
  natsConnection_Close(watcher);
  natsConnection_Destroy(watcher);
  // The durable consumer, the stream and the store are as they were.
  auto consumer_after = js_->SnapshotConsumer(kStream, kConsumer);
  auto stream_after = js_->SnapshotStream(kStream);
  ASSERT_TRUE(consumer_after.ok() && stream_after.ok());
  EXPECT_EQ(*consumer_after, *consumer_before);
  EXPECT_EQ(*stream_after, *stream_before);
  auto list_after = store_->List(kAgent, 100);
  auto agent_after = store_->GetAgent(kAgent);
  ASSERT_TRUE(list_after.ok() && agent_after.ok());
  ASSERT_EQ(list_after->size(), list_before->size());
  EXPECT_EQ((*list_after)[0].checkpoint_id, (*list_before)[0].checkpoint_id);
  EXPECT_EQ(agent_after->status, "active");
  EXPECT_EQ(agent_after->updated_at_ms, agent_before->updated_at_ms);
  EXPECT_EQ(agent_after->last_sequence, agent_before->last_sequence);
}

TEST_F(CliRestoreTest, HumanOutputShowsCountsTimingsAndPrompt) {
  CliResult r = RunCli(Args({"--dry-run", "--nats", nats_.url(), "--replay-max", "2"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("checkpoint  " + checkpoint_id_ + " (sequence 1, taken 1m ago)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 handled, 4 pending, 2 replayed, 3 left out"), std::string::npos) << r.out;
  for (const char* phase : {"PHASE", "load", "replay", "prompt", "total", " ms\n"}) {
    EXPECT_NE(r.out.find(phase), std::string::npos) << phase << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("----- restoration prompt -----"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");  // not a terminal: no progress lines
}

TEST_F(CliRestoreTest, WithoutDryRunItRefuses) {
  CliResult r = RunCli(Args({"--nats", nats_.url()}));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("--dry-run"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("POST /v1/restore"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(CliRestoreTest, WithoutNatsTheReplayIsSkipped) {
  CliResult r = RunCli(Args({"--dry-run", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.Json()["replayConfigured"], false);
  EXPECT_EQ(r.Json()["replayed"], 0);
  CliResult human = RunCli(Args({"--dry-run"}));
  EXPECT_NE(human.out.find("not run (no --nats given)"), std::string::npos) << human.out;
  EXPECT_EQ(RunCli(Args({"--dry-run", "--stream", "S"})).exit_code, 2);
}

// --tokenizer (or CKPT_TOKENIZER) chooses the encoding the prompt is measured in; the reported
// count is the exact count of the printed prompt under it.
TEST_F(CliRestoreTest, TokenizerFlagChoosesTheEncoding) {
  for (TokenEncoding enc : {TokenEncoding::kO200kBase, TokenEncoding::kCl100kBase}) {
    CliResult r =
        RunCli(Args({"--dry-run", "--json", "--tokenizer", std::string(TokenEncodingName(enc))}));
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_EQ(r.Json()["promptTokens"].get<size_t>(),
              CountTokens(r.Json()["prompt"].get<std::string>(), enc));
  }
  CliResult bad = RunCli(Args({"--dry-run", "--tokenizer", "claude"}));
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("--tokenizer"), std::string::npos) << bad.err;
}

TEST_F(CliRestoreTest, AMissingStreamIsReportedNotFatal) {
  CliResult r = RunCli(Args({"--dry-run", "--nats", nats_.url(), "--stream", "NOPE", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.Json().value("replayError", "").find("NOT_FOUND"), std::string::npos) << r.out;
  EXPECT_NE(r.Json()["prompt"].get<std::string>().size(), 0u);
}

TEST_F(CliRestoreTest, ColdStartAndUnreachableNats) {
  CliResult cold = RunCli({"restore", "--agent", "agent-new", "--store", Url(), "--dry-run",
                           "--nats", nats_.url(), "--json"});
  ASSERT_EQ(cold.exit_code, 0) << Describe(cold);
  EXPECT_EQ(cold.Json()["coldStart"], true);
  const std::string down = "nats://127.0.0.1:" + std::to_string(PickFreePort());
  CliResult r = RunCli(Args({"--dry-run", "--nats", down, "--timeout-ms", "500"}));
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("UNAVAILABLE"), std::string::npos) << r.err;
}

// Replayed bodies are redacted as the sidecar redacts them: the prompt never shows a secret.
TEST_F(CliRestoreTest, ReplayedSecretsAreRedacted) {
  const std::string token = "ghp_" + std::string(36, 'A');
  ASSERT_TRUE(js_->Publish(kInbox, "deploy with token " + token).ok());
  CliResult r = RunCli(Args({"--dry-run", "--nats", nats_.url(), "--json"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string prompt = r.Json()["prompt"];
  EXPECT_EQ(r.out.find(token), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("deploy with token [REDACTED:"), std::string::npos) << prompt;
}

// setup-stream shares the NATS flags with restore and create; its --json output parses too.
TEST_F(CliRestoreTest, SetupStreamJsonParses) {
  const std::vector<std::string> args = {"setup-stream", "--agent",    "agent-other", "--stream",
                                         "AGENT_other",  "--consumer", "agent-other", "--nats",
                                         nats_.url(),    "--json"};
  CliResult first = RunCli(args);
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  EXPECT_EQ(first.Json()["streamCreated"], true);
  EXPECT_EQ(first.Json()["consumerCreated"], true);
  EXPECT_EQ(first.Json()["subjects"], nlohmann::json::array({"agent.agent-other.inbox.>"}));
  CliResult again = RunCli(args);
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  EXPECT_EQ(again.Json()["streamCreated"], false);
  // The auth flags are checked before connecting.
  std::vector<std::string> bad = args;
  bad.insert(bad.end(), {"--nats-user", "u"});
  EXPECT_EQ(RunCli(bad).exit_code, 2);
}

}  // namespace
}  // namespace agentckpt::testing
