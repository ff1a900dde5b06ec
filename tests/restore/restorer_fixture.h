// Shared parts of the Restorer tests: a real SQLite store in a temp dir, a fake clock, a
// scripted ReplaySource (the real JetStream one is tested in restore_jetstream_test.cc) and an
// events sink that records what was announced and the agent's stored status at that moment.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/canonical.h"
#include "common/fake_env.h"
#include "restore/restore_result.h"
#include "restore/restorer.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {

inline constexpr char kAgent[] = "agent-restore-test";

// Records what the Restorer announces, with the agent's stored status at that moment.
class RecordingEvents : public RestoreEvents {
 public:
  explicit RecordingEvents(CheckpointStore* store) : store_(store) {}
  void PublishStatus(const std::string& agent_id, const std::string& status) override {
    Add("status:" + status + "@" + StoredStatus(agent_id));
  }
  void PublishRestored(const std::string& agent_id, const RestoreResult& result) override {
    std::lock_guard<std::mutex> lock(mu_);
    restored_.push_back(RestoredEventPayload(result));
    log_.push_back("restored@" + StoredStatus(agent_id));
  }
  void PublishFailed(const std::string&, const Status& status) override {
    Add("failed:" + std::string(StatusCodeName(status.code())));
  }
  std::vector<std::string> log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }
  std::vector<nlohmann::json> restored() {
    std::lock_guard<std::mutex> lock(mu_);
    return restored_;
  }

 private:
  void Add(std::string e) {
    std::lock_guard<std::mutex> lock(mu_);
    log_.push_back(std::move(e));
  }
  std::string StoredStatus(const std::string& agent_id) {
    auto rec = store_->GetAgent(agent_id);
    return rec.ok() ? rec->status : "?";
  }
  CheckpointStore* store_;
  std::mutex mu_;
  std::vector<std::string> log_;
  std::vector<nlohmann::json> restored_;
};

// A ReplaySource double: returns a prepared result (or error), takes `read_micros` of the fake
// clock, and notes the agent's stored status while it runs.
class ScriptedReplay : public ReplaySource {
 public:
  ScriptedReplay(FakeEnv* env, CheckpointStore* store) : env_(env), store_(store) {}
  StatusOr<ReplayResult> ReadSince(const NatsPosition& position, size_t max_messages,
                                   size_t max_body_bytes) override {
    ++calls;
    last_position = position;
    last_max_messages = max_messages;
    last_max_body_bytes = max_body_bytes;
    auto rec = store_->GetAgent(kAgent);
    status_during_read = rec.ok() ? rec->status : "?";
    env_->AdvanceMicros(read_micros);
    if (!error.ok()) return error;
    return result;
  }
  ReplayResult result;
  Status error;
  int64_t read_micros = 7000;
  int calls = 0;
  NatsPosition last_position;
  size_t last_max_messages = 0, last_max_body_bytes = 0;
  std::string status_during_read;

 private:
  FakeEnv* env_;
  CheckpointStore* store_;
};

class RestorerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_path_ = tmp_.File("checkpoints.db");
    auto store = OpenStore("sqlite://" + db_path_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    events_ = std::make_unique<RecordingEvents>(store_.get());
    replay_ = std::make_unique<ScriptedReplay>(&env_, store_.get());
  }

  // Stores checkpoint `seq` of the agent (with a stream position) and returns it as sealed.
  Checkpoint Put(int64_t seq, std::optional<Workspace> ws = std::nullopt) {
    Checkpoint cp = MakeCheckpoint(kAgent, seq);
    cp.nats_position = NatsPosition{"AGENT_INBOX", kAgent, static_cast<uint64_t>(1000 + seq), 0};
    cp.workspace = std::move(ws);
    auto sealed = Seal(cp);
    EXPECT_TRUE(sealed.ok()) << sealed.status().ToString();
    auto put = store_->Put(*sealed, PutOptions{});
    EXPECT_TRUE(put.ok()) << put.status().ToString();
    return sealed->doc;
  }

  // Damages the stored bytes of checkpoint `seq` (its hash no longer matches).
  void Corrupt(int64_t seq) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
    std::string sql =
        "UPDATE checkpoints SET document = replace(document, 'Draft paragraph', "
        "'Draft paragrapX') WHERE sequence = " +
        std::to_string(seq);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
    EXPECT_EQ(sqlite3_changes(db), 1);
    sqlite3_free(err);
    sqlite3_close(db);
  }

  StatusOr<RestoreResult> Run(RestoreOptions opts = {}, bool with_replay = true,
                              WorkspaceAction workspace = WorkspaceAction::kLeave) {
    Restorer r(&env_, store_.get(), with_replay ? replay_.get() : nullptr, events_.get(), opts);
    return r.Run(kAgent, nullptr, workspace);
  }

  std::string StoredStatus() {
    auto rec = store_->GetAgent(kAgent);
    return rec.ok() ? rec->status : "?";
  }

  TempDir tmp_;
  std::string db_path_;
  FakeEnv env_{1793760300000 + 3 * 1000 + 60'000};  // a minute after checkpoint 3
  std::unique_ptr<CheckpointStore> store_;
  std::unique_ptr<RecordingEvents> events_;
  std::unique_ptr<ScriptedReplay> replay_;
};

}  // namespace agentckpt::testing
