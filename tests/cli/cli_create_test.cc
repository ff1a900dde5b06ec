// `agentckpt create`, run as the real binary against a real sidecar process (`agentckpt run`)
// over a real nats-server with a SQLite store file.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>

#include "nats/nats_handles.h"
#include "nats/subjects.h"
#include "tests/cli/cli_runner.h"
#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

class CliCreateTest : public SidecarEnvTest {
 protected:
  std::vector<std::string> Args(std::vector<std::string> extra) const {
    std::vector<std::string> args = {"create", "--agent", kProcAgent, "--nats", nats_->url()};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  // Gives the sidecar a context. The first one is a task phase change, which the sidecar
  // checkpoints at once: that event is consumed here, so the tests see only their own.
  void PutContext() {
    ASSERT_EQ(
        HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
        200);
    nlohmann::json event = NextEvent();
    ASSERT_TRUE(event.is_object());
    ASSERT_EQ(event["data"]["trigger"], "task_phase_change") << event.dump();
    ASSERT_EQ(ListCheckpoints().size(), 1u);
  }
};

TEST_F(CliCreateTest, CreateReturnsTheCreatedCheckpointWhichIsInTheStore) {
  auto sidecar = StartSidecar();
  PutContext();
  CliResult r = RunCli(Args({"--trigger", "manual", "--task-id", "task-4521", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r) << "\nsidecar:\n" << sidecar->Stderr();
  nlohmann::json j = r.Json();
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["result"], "created");
  EXPECT_EQ(j["trigger"], "manual");
  EXPECT_EQ(j["answered"], true);
  EXPECT_EQ(j["eventSeen"], true);
  const std::string id = j["checkpointId"];
  // The sidecar announced the same checkpoint on checkpoint.created.
  nlohmann::json event = NextEvent();
  ASSERT_TRUE(event.is_object());
  EXPECT_EQ(event["subject"], subjects::CheckpointCreated(kProcAgent));
  EXPECT_EQ(event["data"]["checkpointId"], id);
  EXPECT_EQ(event["data"]["sequenceNumber"], j["sequenceNumber"]);
  // And it is in the store, with the manual trigger.
  std::vector<CheckpointInfo> stored = ListCheckpoints();
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].checkpoint_id, id);
  EXPECT_EQ(stored[0].sequence_number, j["sequenceNumber"].get<int64_t>());
  EXPECT_EQ(stored[0].size_bytes, j["sizeBytes"].get<int64_t>());
  EXPECT_EQ(stored[0].trigger_reason, TriggerReason::kManual);

  // Human output: id, sequence, human size, duration.
  CliResult human = RunCli(Args({}));
  ASSERT_EQ(human.exit_code, 0) << Describe(human);
  stored = ListCheckpoints();
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_NE(human.out.find("created   " + stored[0].checkpoint_id), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("sequence  3"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find(" KB\n"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find(" ms\n"), std::string::npos) << human.out;
  EXPECT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
}

TEST_F(CliCreateTest, NoSidecarExits3) {
  // Nobody listens (not even the fixture's watcher on checkpoint.>): the server says so at once.
  ASSERT_EQ(natsSubscription_Unsubscribe(events_), NATS_OK);
  ASSERT_EQ(natsConnection_FlushTimeout(events_nc_, 2000), NATS_OK);
  CliResult none = RunCli(Args({"--json", "--timeout", "10"}));
  EXPECT_EQ(none.exit_code, 3) << Describe(none);
  EXPECT_EQ(none.Json()["result"], "timeout");
  EXPECT_NE(none.err.find("no sidecar listens"), std::string::npos) << none.err;
  // Something listens but never answers: the timeout expires.
  natsSubscription* silent = nullptr;
  const std::string subject = subjects::CheckpointCreate(kProcAgent);
  ASSERT_EQ(natsConnection_SubscribeSync(&silent, events_nc_, subject.c_str()), NATS_OK);
  ASSERT_EQ(natsConnection_FlushTimeout(events_nc_, 2000), NATS_OK);
  const auto start = std::chrono::steady_clock::now();
  CliResult r = RunCli(Args({"--timeout", "1"}));
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("timeout"), std::string::npos) << r.err;
  EXPECT_GE(took, 1.0);
  agentckpt::nats_handles::UnsubscribeAndDestroy(events_nc_, silent);
  // NATS itself unreachable.
  const std::string down = "nats://127.0.0.1:" + std::to_string(PickFreePort());
  CliResult unreachable = RunCli({"create", "--agent", kProcAgent, "--nats", down});
  EXPECT_EQ(unreachable.exit_code, 3) << Describe(unreachable);
}

// The store is locked by another writer longer than the sidecar's busy timeout: the write fails,
// the sidecar answers with the error and publishes checkpoint.failed, and create exits 1.
TEST_F(CliCreateTest, AFailedCheckpointExits1WithTheReason) {
  auto sidecar = StartSidecar();
  PutContext();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.File("store.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  CliResult r = RunCli(Args({"--json", "--timeout", "30"}), {}, 60000);
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_EQ(r.exit_code, 1) << Describe(r) << "\nsidecar:\n" << sidecar->Stderr();
  nlohmann::json j = r.Json();
  EXPECT_EQ(j["result"], "failed");
  EXPECT_NE(j.value("reason", "").find("UNAVAILABLE"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("failed"), std::string::npos) << r.err;
  nlohmann::json event = NextEvent();
  ASSERT_TRUE(event.is_object());
  EXPECT_EQ(event["subject"], subjects::CheckpointFailed(kProcAgent));
  EXPECT_EQ(ListCheckpoints().size(), 1u);
  // The store is free again: the next request succeeds.
  EXPECT_EQ(RunCli(Args({})).exit_code, 0);
  EXPECT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
}

}  // namespace
}  // namespace agentckpt::testing
