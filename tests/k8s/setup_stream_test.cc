// SetupStream against a real nats-server: the stream and consumer it creates, idempotency, the
// refusal to touch a differently configured stream or consumer, and the subcommand's parsing.
#include "cli/setup_stream.h"

#include <gtest/gtest.h>
#include <nats/nats.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <set>

#include "tests/support/jetstream_fixture.h"
#include "tests/support/nats_server.h"

namespace agentckpt {
namespace {

using testing::JetStreamTestClient;
using testing::NatsServerProcess;

SetupStreamOptions Options(const NatsServerProcess& server) {
  SetupStreamOptions o;
  o.nats_url = server.url();
  o.agent_id = "agent-marketing-prod";
  o.stream = "AGENT_agent-marketing-prod";
  o.consumer = "agent-marketing-prod";
  o.max_age_s = 7 * 86400;
  o.timeout_ms = 3000;
  return o;
}

struct StreamInfoDeleter {
  void operator()(jsStreamInfo* si) const { jsStreamInfo_Destroy(si); }
};
struct ConsumerInfoDeleter {
  void operator()(jsConsumerInfo* ci) const { jsConsumerInfo_Destroy(ci); }
};

std::unique_ptr<jsStreamInfo, StreamInfoDeleter> StreamInfo(JetStreamTestClient& c,
                                                            const std::string& name) {
  jsStreamInfo* si = nullptr;
  EXPECT_EQ(js_GetStreamInfo(&si, c.js(), name.c_str(), nullptr, nullptr), NATS_OK);
  return std::unique_ptr<jsStreamInfo, StreamInfoDeleter>(si);
}

std::unique_ptr<jsConsumerInfo, ConsumerInfoDeleter> ConsumerInfo(JetStreamTestClient& c,
                                                                  const std::string& stream,
                                                                  const std::string& name) {
  jsConsumerInfo* ci = nullptr;
  EXPECT_EQ(js_GetConsumerInfo(&ci, c.js(), stream.c_str(), name.c_str(), nullptr, nullptr),
            NATS_OK);
  return std::unique_ptr<jsConsumerInfo, ConsumerInfoDeleter>(ci);
}

class SetupStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = JetStreamTestClient::Connect(server_.url());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    client_ = std::move(*c);
  }
  NatsServerProcess server_;
  std::unique_ptr<JetStreamTestClient> client_;
};

TEST_F(SetupStreamTest, CreatesFileStreamAndDurablePullConsumerWithExplicitAcks) {
  SetupStreamOptions o = Options(server_);
  SetupStreamReport report;
  Status s = SetupStream(o, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(report.stream_created);
  EXPECT_TRUE(report.consumer_created);

  auto si = StreamInfo(*client_, o.stream);
  ASSERT_NE(si, nullptr);
  const jsStreamConfig& sc = *si->Config;
  ASSERT_EQ(sc.SubjectsLen, 1);
  EXPECT_STREQ(sc.Subjects[0], "agent.agent-marketing-prod.inbox.>");
  EXPECT_EQ(sc.Storage, js_FileStorage);
  EXPECT_EQ(sc.Retention, js_LimitsPolicy);
  EXPECT_EQ(sc.Replicas, 1);
  EXPECT_EQ(sc.MaxAge, int64_t{7} * 86400 * 1000000000);

  auto ci = ConsumerInfo(*client_, o.stream, o.consumer);
  ASSERT_NE(ci, nullptr);
  const jsConsumerConfig& cc = *ci->Config;
  EXPECT_STREQ(cc.Durable, "agent-marketing-prod");
  EXPECT_TRUE(cc.DeliverSubject == nullptr || *cc.DeliverSubject == '\0');
  EXPECT_EQ(cc.AckPolicy, js_AckExplicit);
  EXPECT_EQ(cc.DeliverPolicy, js_DeliverAll);
  EXPECT_STREQ(cc.FilterSubject, "agent.agent-marketing-prod.inbox.>");

  // The inbox captures the agent's messages, never the sidecar's checkpoint events.
  ASSERT_TRUE(client_->Publish("agent.agent-marketing-prod.inbox.task", "do it").ok());
  natsConnection_PublishString(client_->connection(),
                               "agent.agent-marketing-prod.checkpoint.created", "{}");
  natsConnection_Flush(client_->connection());
  auto snap = client_->SnapshotStream(o.stream);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->msgs, 1u);
  auto acked = client_->FetchAndAckThrough(o.stream, o.consumer, 1);
  ASSERT_TRUE(acked.ok()) << acked.status().ToString();
  EXPECT_EQ(*acked, 1);
}

TEST_F(SetupStreamTest, SecondRunFindsBothAndChangesNothing) {
  SetupStreamOptions o = Options(server_);
  ASSERT_TRUE(SetupStream(o).ok());
  auto seqs = client_->PublishN("agent.agent-marketing-prod.inbox.task", 3, "m");
  ASSERT_TRUE(seqs.ok());
  ASSERT_TRUE(client_->FetchAndAckThrough(o.stream, o.consumer, (*seqs)[1]).ok());
  auto stream_before = client_->SnapshotStream(o.stream);
  auto consumer_before = client_->SnapshotConsumer(o.stream, o.consumer);
  ASSERT_TRUE(stream_before.ok() && consumer_before.ok());

  SetupStreamReport report;
  Status s = SetupStream(o, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(report.stream_created);
  EXPECT_FALSE(report.consumer_created);
  EXPECT_EQ(*client_->SnapshotStream(o.stream), *stream_before);
  EXPECT_EQ(*client_->SnapshotConsumer(o.stream, o.consumer), *consumer_before);
}

TEST_F(SetupStreamTest, StreamWithOtherSubjectsIsAnErrorAndLeftAlone) {
  SetupStreamOptions o = Options(server_);
  ASSERT_TRUE(client_->CreateStream(o.stream, {"agent.agent-marketing-prod.tasks.>"}).ok());
  Status s = SetupStream(o);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("subjects are agent.agent-marketing-prod.tasks.>"), std::string::npos)
      << s.message();
  auto si = StreamInfo(*client_, o.stream);
  ASSERT_NE(si, nullptr);
  EXPECT_STREQ(si->Config->Subjects[0], "agent.agent-marketing-prod.tasks.>");
}

TEST_F(SetupStreamTest, SubjectsTakenByAnotherStreamAreAnError) {
  SetupStreamOptions o = Options(server_);
  ASSERT_TRUE(client_->CreateStream("OTHER", {"agent.agent-marketing-prod.inbox.>"}).ok());
  Status s = SetupStream(o);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("overlap"), std::string::npos) << s.message();
}

TEST_F(SetupStreamTest, DifferentReplicasOrMaxAgeIsAnError) {
  SetupStreamOptions o = Options(server_);
  ASSERT_TRUE(SetupStream(o).ok());
  o.max_age_s = 3600;
  Status s = SetupStream(o);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("max age is 604800s, want 3600s"), std::string::npos) << s.message();
}

TEST_F(SetupStreamTest, ConsumerWithOtherFilterIsAnError) {
  SetupStreamOptions o = Options(server_);
  o.max_age_s = 0;  // as the stream made below
  ASSERT_TRUE(client_->CreateStream(o.stream, {"agent.agent-marketing-prod.inbox.>"}).ok());
  ASSERT_TRUE(client_
                  ->CreateDurablePullConsumer(o.stream, o.consumer,
                                              "agent.agent-marketing-prod.inbox.urgent")
                  .ok());
  SetupStreamReport report;
  Status s = SetupStream(o, &report);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("filter subject is \"agent.agent-marketing-prod.inbox.urgent\""),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(report.stream_created);
}

TEST_F(SetupStreamTest, SeveralSubjectsGiveAnUnfilteredConsumer) {
  SetupStreamOptions o = Options(server_);
  o.subjects = "agent.{agent}.inbox.>, agent.{agent}.tasks.*";
  SetupStreamReport report;
  ASSERT_TRUE(SetupStream(o, &report).ok());
  auto si = StreamInfo(*client_, o.stream);
  ASSERT_NE(si, nullptr);
  std::set<std::string> subjects(si->Config->Subjects,
                                 si->Config->Subjects + si->Config->SubjectsLen);
  EXPECT_EQ(subjects, (std::set<std::string>{"agent.agent-marketing-prod.inbox.>",
                                             "agent.agent-marketing-prod.tasks.*"}));
  auto ci = ConsumerInfo(*client_, o.stream, o.consumer);
  ASSERT_NE(ci, nullptr);
  EXPECT_TRUE(ci->Config->FilterSubject == nullptr || *ci->Config->FilterSubject == '\0');
  EXPECT_TRUE(SetupStream(o).ok());
}

TEST(SetupStreamSubjects, RejectsSubjectsOutsideTheAgentOrCoveringCheckpointEvents) {
  SetupStreamOptions o;
  o.agent_id = "a1";
  for (const char* bad :
       {"agent.a2.inbox.>", "agent.a1.>", "agent.a1.*.x", "agent.a1", "agent.a1.checkpoint.create",
        "agent.a1.in box", "agent.a1.>.x", "agent.a1.inbox..x", "agent.a1.in>",
        "agent.a1.inbox.>,agent.a1.inbox.>", ""}) {
    o.subjects = bad;
    auto r = ExpandSetupSubjects(o);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  o.subjects = "agent.{agent}.inbox.>,agent.a1.tasks.*";
  auto r = ExpandSetupSubjects(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<std::string>{"agent.a1.inbox.>", "agent.a1.tasks.*"}));
  o.agent_id = "bad id";
  EXPECT_EQ(ExpandSetupSubjects(o).status().code(), StatusCode::kInvalidArgument);
}

TEST(SetupStreamDuration, ParsesUnitsAndRejectsNonsense) {
  EXPECT_EQ(*ParseDurationSeconds("0"), 0);
  EXPECT_EQ(*ParseDurationSeconds("90s"), 90);
  EXPECT_EQ(*ParseDurationSeconds("30m"), 1800);
  EXPECT_EQ(*ParseDurationSeconds("72h"), 259200);
  EXPECT_EQ(*ParseDurationSeconds("7d"), 604800);
  EXPECT_EQ(*ParseDurationSeconds("1h30m"), 5400);
  for (const char* bad : {"", "5", "h", "1x", "-1h", "1.5h", "36500000d", "1h "}) {
    EXPECT_EQ(ParseDurationSeconds(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(SetupStreamErrors, BadNamesAndUnreachableServer) {
  SetupStreamOptions o;
  o.agent_id = "a1";
  o.consumer = "c";
  o.stream = "has.dot";
  EXPECT_EQ(SetupStream(o).code(), StatusCode::kInvalidArgument);
  o.stream = "";
  EXPECT_EQ(SetupStream(o).code(), StatusCode::kInvalidArgument);
  o.stream = "S";
  o.replicas = 0;
  EXPECT_EQ(SetupStream(o).code(), StatusCode::kInvalidArgument);
  o.replicas = 1;
  o.nats_url = "nats://setup:s3cret@127.0.0.1:" + std::to_string(testing::PickFreePort());
  o.timeout_ms = 1000;
  Status s = SetupStream(o);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_EQ(s.message().find("s3cret"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("nats://***@127.0.0.1:"), std::string::npos) << s.message();
  o.nats_url = "setup:s3cret@127.0.0.1:4222";
  s = SetupStream(o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().find("s3cret"), std::string::npos) << s.message();
}

TEST(SetupStreamAuth, UsesUserAndPasswordAndReportsRefusal) {
  NatsServerProcess server("--user setup --pass s3cret");
  SetupStreamOptions o = Options(server);
  o.user = "setup";
  o.password = "wrong";
  Status s = SetupStream(o);
  EXPECT_EQ(s.code(), StatusCode::kUnauthenticated) << s.ToString();
  o.password = "s3cret";
  s = SetupStream(o);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// Runs the subcommand as main() would, with `args` after the program name.
int RunCommand(std::vector<std::string> args) {
  CLI::App app{"agentckpt"};
  app.require_subcommand(1);
  SetupStreamCommand command(&app);
  std::vector<const char*> argv = {"agentckpt"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return command.Selected() ? command.Execute() : 2;
}

TEST_F(SetupStreamTest, CommandTakesDefaultsFromTheEnvironmentAndExitsOneOnMismatch) {
  ::setenv("NATS_URL", server_.url().c_str(), 1);
  ::setenv("AGENT_ID", "a7", 1);
  ::setenv("JS_STREAM", "AGENT_a7", 1);
  ::setenv("JS_CONSUMER", "a7", 1);
  EXPECT_EQ(RunCommand({"setup-stream", "--max-age", "2h"}), 0);
  EXPECT_EQ(RunCommand({"setup-stream", "--max-age", "2h"}), 0);
  auto si = StreamInfo(*client_, "AGENT_a7");
  ASSERT_NE(si, nullptr);
  EXPECT_EQ(si->Config->MaxAge, int64_t{7200} * 1000000000);
  EXPECT_EQ(RunCommand({"setup-stream", "--max-age", "3h"}), 1);
  EXPECT_EQ(RunCommand({"setup-stream", "--max-age", "soon"}), 2);
  EXPECT_EQ(RunCommand({"setup-stream", "--replicas", "9"}), 2);
  EXPECT_EQ(RunCommand({"setup-stream", "--help"}), 0);
  ::unsetenv("AGENT_ID");
  EXPECT_EQ(RunCommand({"setup-stream"}), 2);
  ::setenv("AGENT_ID", "a7", 1);
  ::setenv("NATS_URL", ("nats://127.0.0.1:" + std::to_string(testing::PickFreePort())).c_str(), 1);
  EXPECT_EQ(RunCommand({"setup-stream", "--timeout-ms", "1000"}), 3);
  for (const char* v : {"NATS_URL", "AGENT_ID", "JS_STREAM", "JS_CONSUMER"}) ::unsetenv(v);
}

}  // namespace
}  // namespace agentckpt
