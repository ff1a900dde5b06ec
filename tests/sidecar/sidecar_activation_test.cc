// A sidecar that gets the writer lease but cannot read the agent's newest checkpoint (the
// Firestore emulator failing every checkpoint query, and only those) must not take the writer's
// seat with an empty context: the next checkpoint would then be the agent's newest state and the
// acknowledged context would be lost. It keeps the lease, refuses changes and checkpoints with
// the reason, retries, and takes the context up once the store answers.
#include <signal.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/firestore/emulator_process.h"
#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

class SidecarActivationTest : public SidecarEnvTest {
 protected:
  void SetUp() override {
    SidecarEnvTest::SetUp();
    Status s = emulator_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  std::map<std::string, std::string> FirestoreEnv() const {
    return {{"CKPT_STORE", "firestore://projects/activation/databases/(default)"},
            {"FIRESTORE_EMULATOR_HOST", emulator_.host_port()}};
  }
  // Writes a checkpoint, then a change that only the journal holds, reads the acknowledged
  // context into `acknowledged` and SIGKILLs the sidecar.
  void WriteStateThenKill(HttpReply* acknowledged) {
    auto first = StartSidecar(FirestoreEnv());
    ASSERT_EQ(
        HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
        200);
    ASSERT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", "{}").status, 201);
    json changed = json::parse(FixtureContextBody("checkpoint-16k.json"));
    changed["activeTask"]["title"] = "the task after the checkpoint, in the journal only";
    ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", changed.dump()).status, 200);
    *acknowledged = HttpCall(port_, "GET", "/v1/context");
    ASSERT_EQ(acknowledged->status, 200);
    ASSERT_NE(acknowledged->body.find("in the journal only"), std::string::npos);
    EXPECT_EQ(first->Signal(SIGKILL), 128 + SIGKILL);
  }
  // Polls /readyz (bounded: 600 polls 50 ms apart) until `done` accepts the reply; the last one.
  template <typename Done>
  HttpReply PollReady(Done done) {
    HttpReply r;
    for (int i = 0; i < 600; ++i) {
      r = HttpCall(port_, "GET", "/readyz");
      if (done(r)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return r;
  }
  // Fails every checkpoint query (503, retried by the client until it gives up; the lease and
  // the journal are served), starts a sidecar and waits until /readyz says it cannot read the
  // newest checkpoint (503).
  void StartWithCheckpointQueriesFailing(std::unique_ptr<SidecarProcess>* sidecar,
                                         HttpReply* waiting) {
    ASSERT_TRUE(emulator_
                    .SetFaults({{"errorRate", 1.0},
                                {"errorStatus", 503},
                                {"match", "\"collectionId\":\"snapshots\""}})
                    .ok());
    *sidecar = StartSidecar(FirestoreEnv());
    *waiting = PollReady([](const HttpReply& r) {
      return r.body.find("cannot read the agent's newest checkpoint") != std::string::npos;
    });
    ASSERT_EQ(waiting->status, 503) << waiting->body << (*sidecar)->Describe();
  }
  // Waits until `sidecar` is ready and checks that its context is the acknowledged one.
  void ExpectReadyWithContext(SidecarProcess* sidecar, const HttpReply& acknowledged) {
    const HttpReply ready = PollReady([](const HttpReply& r) { return r.status == 200; });
    ASSERT_EQ(ready.status, 200) << ready.body << sidecar->Describe();
    const HttpReply restored = HttpCall(port_, "GET", "/v1/context");
    ASSERT_EQ(restored.status, 200) << restored.body;
    EXPECT_EQ(json::parse(restored.body), json::parse(acknowledged.body));
  }
  EmulatorProcess emulator_;
};

TEST_F(SidecarActivationTest, AnUnreadableCheckpointKeepsTheWriterSeatClosedUntilItReads) {
  // The agent's state: a checkpoint, then a change that only the journal holds.
  HttpReply acknowledged;
  ASSERT_NO_FATAL_FAILURE(WriteStateThenKill(&acknowledged));

  // Every checkpoint query fails; the lease and the journal are served.
  std::unique_ptr<SidecarProcess> second;
  HttpReply waiting;
  ASSERT_NO_FATAL_FAILURE(StartWithCheckpointQueriesFailing(&second, &waiting));
  ASSERT_NE(waiting.body.find("cannot read the agent's newest checkpoint"), std::string::npos)
      << waiting.body << second->Describe();
  EXPECT_EQ(json::parse(waiting.body)["lease"]["state"], "held") << waiting.body;

  // Meanwhile nothing is accepted, and nothing is written over the agent's state.
  json other = json::parse(FixtureContextBody("checkpoint-16k.json"));
  other["activeTask"]["title"] = "a change no writer may accept";
  const HttpReply put = HttpCall(port_, "PUT", "/v1/context", other.dump());
  EXPECT_EQ(put.status, 503) << put.body;
  EXPECT_NE(put.body.find("cannot read the agent's newest checkpoint"), std::string::npos)
      << put.body;
  const HttpReply create = HttpCall(port_, "POST", "/v1/checkpoints", "{}");
  EXPECT_EQ(create.status, 503) << create.body;
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/context").status, 503);

  // The store answers again: the context is the acknowledged one, journal included.
  ASSERT_TRUE(emulator_.SetFaults(json::object()).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectReadyWithContext(second.get(), acknowledged));
  const std::string log = second->Stdout();
  EXPECT_NE(log.find("holding the writer lease without taking up the agent's context yet"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("the agent's context is taken up after failed attempts"), std::string::npos)
      << log;
  EXPECT_EQ(second->Signal(SIGTERM, 30000), 0) << second->Describe();
}

// The journal read fails instead: without it the context would go back to the checkpoint.
// Scripted: the journal query of the lease takeover (its fence) passes, the next twelve journal
// queries fail, which is more than one load's retries (10 requests).
TEST_F(SidecarActivationTest, AnUnreadableJournalIsRetriedNotSkipped) {
  HttpReply acknowledged;
  ASSERT_NO_FATAL_FAILURE(WriteStateThenKill(&acknowledged));
  std::vector<std::string> script = {"none"};
  script.insert(script.end(), 12, "error");
  ASSERT_TRUE(
      emulator_.SetFaults({{"script", script}, {"match", "\"collectionId\":\"journal\""}}).ok());
  auto second = StartSidecar(FirestoreEnv());
  ASSERT_NO_FATAL_FAILURE(ExpectReadyWithContext(second.get(), acknowledged));
  const std::string log = second->Stdout();
  EXPECT_NE(log.find("\"what\":\"cannot read the agent's journal\""), std::string::npos) << log;
  EXPECT_NE(log.find("the agent's context is taken up after failed attempts"), std::string::npos)
      << log;
  EXPECT_EQ(second->Signal(SIGTERM, 30000), 0) << second->Describe();
}

// SIGTERM while the state is still unreadable: the sidecar has nothing of the agent's to save
// and must not write a pre_shutdown checkpoint of its empty context over the agent's state.
TEST_F(SidecarActivationTest, ShutdownBeforeTheStateIsReadWritesNothing) {
  HttpReply acknowledged;
  ASSERT_NO_FATAL_FAILURE(WriteStateThenKill(&acknowledged));
  std::unique_ptr<SidecarProcess> second;
  HttpReply waiting;
  ASSERT_NO_FATAL_FAILURE(StartWithCheckpointQueriesFailing(&second, &waiting));
  EXPECT_EQ(second->Signal(SIGTERM, 30000), 0) << second->Describe();
  const std::string log = second->Stdout();
  EXPECT_NE(log.find("no pre_shutdown checkpoint: this sidecar is not the writer"),
            std::string::npos)
      << log;

  // The next sidecar, with the store answering, finds the agent's state as acknowledged.
  ASSERT_TRUE(emulator_.SetFaults(json::object()).ok());
  auto third = StartSidecar(FirestoreEnv());
  ASSERT_NO_FATAL_FAILURE(ExpectReadyWithContext(third.get(), acknowledged));
  EXPECT_EQ(third->Signal(SIGTERM, 30000), 0) << third->Describe();
}

}  // namespace
}  // namespace agentckpt::testing
