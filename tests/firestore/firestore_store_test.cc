// FirestoreStore against the emulator (a real child process): request counts, the document
// layout, corruption, a second writer, error mapping and OpenStore.
#include "store/firestore/firestore_store.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "checkpoint/checkpoint_json.h"
#include "common/time_format.h"
#include "tests/firestore/emulator_suite.h"
#include "tests/store/store_test_util.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

class FirestoreStoreTest : public EmulatorSuite {
 protected:
  void SetUp() override {
    StartTest("p-");
    // Hedging off: tests here count the requests an operation makes, and a hedge (a second copy
    // of a request slow to answer, e.g. under a sanitizer on a busy machine) would be counted too.
    store_ = OpenEmulatorStore(emulator_->host_port(), project_, 2000, 20000,
                               /*hedge_after_ms=*/0);
    ASSERT_NE(store_, nullptr);
  }

  std::string DocPath(const std::string& rest) {
    return "/v1/projects/" + project_ + "/databases/(default)/documents/" + rest;
  }
  json GetRaw(const std::string& rest) {
    auto reply = emulator_->Request("GET", DocPath(rest));
    EXPECT_TRUE(reply.ok());
    return json::parse(reply->second);
  }

  std::unique_ptr<FirestoreStore> store_;
};

TEST_F(FirestoreStoreTest, SteadyStatePutIsOneRequestIncludingItsRetentionDeletes) {
  PutOptions opts;
  opts.keep = 3;
  for (int seq = 1; seq <= 3; ++seq) STORE_ASSERT_OK(store_->Put(SealedAt("agent-a", seq), opts));
  for (int seq = 4; seq <= 10; ++seq) {
    uint64_t before = store_->requests_sent();
    auto result = store_->Put(SealedAt("agent-a", seq), opts);
    STORE_ASSERT_OK(result);
    EXPECT_EQ(store_->requests_sent() - before, 1u) << "sequence " << seq;
    EXPECT_EQ(result->pruned, 1);
  }
  auto listed = store_->List("agent-a", 100);
  STORE_ASSERT_OK(listed);
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[0].sequence_number, 10);
  EXPECT_EQ((*listed)[2].sequence_number, 8);
}

TEST_F(FirestoreStoreTest, LatestVerifiedIsOneRequestWhenTheNewestIsIntact) {
  for (int seq = 1; seq <= 4; ++seq) STORE_ASSERT_OK(store_->Put(SealedAt("agent-a", seq), {}));
  uint64_t before = store_->requests_sent();
  auto latest = store_->GetLatestVerified("agent-a");
  STORE_ASSERT_OK(latest);
  EXPECT_EQ(store_->requests_sent() - before, 1u);
  EXPECT_EQ(latest->checkpoint.sequence_number, 4);
  EXPECT_TRUE(latest->skipped.empty());
}

TEST_F(FirestoreStoreTest, DocumentsUseTheDocumentedLayoutAndTypedValues) {
  SealedCheckpoint sealed = SealedAt("agent-a", 7);
  STORE_ASSERT_OK(store_->Put(sealed, {}));
  json doc = GetRaw("checkpoints/agent-a/snapshots/" + sealed.doc.checkpoint_id);
  const json& f = doc["fields"];
  EXPECT_EQ(f["sequenceNumber"], (json{{"integerValue", "7"}}));
  EXPECT_EQ(f["timestamp"],
            (json{{"timestampValue", FormatRfc3339Millis(sealed.doc.timestamp_ms)}}));
  EXPECT_EQ(f["expireAt"],
            (json{{"timestampValue", FormatRfc3339Millis(sealed.doc.expire_at_ms)}}));
  EXPECT_EQ(f["contentSha256"], (json{{"stringValue", sealed.doc.content_sha256}}));
  EXPECT_EQ(f["natsPosition"], (json{{"nullValue", nullptr}}));
  EXPECT_TRUE(
      f["contextSummary"]["mapValue"]["fields"]["planOutline"]["arrayValue"].contains("values"));

  json agent = GetRaw("agents/agent-a");
  EXPECT_EQ(agent["fields"]["lastSequence"], (json{{"integerValue", "7"}}));
  EXPECT_TRUE(agent["fields"]["updatedAt"].contains("timestampValue"));
  EXPECT_EQ(agent["fields"]["agentId"], (json{{"stringValue", "agent-a"}}));
}

TEST_F(FirestoreStoreTest, ReadBackTimestampsAreByteIdenticalToTheHashedOnes) {
  Checkpoint cp = MakeCheckpoint("agent-a", 1);
  cp.timestamp_ms = 1793760300123;  // a fraction that must survive
  cp.context_summary.tool_call_log[0].timestamp_ms = 1793760200007;
  SealedCheckpoint sealed = SealForTest(cp);
  STORE_ASSERT_OK(store_->Put(sealed, {}));
  auto back = store_->GetById("agent-a", sealed.doc.checkpoint_id);
  STORE_ASSERT_OK(back);
  EXPECT_EQ(CheckpointToJson(*back), FullDocumentJson(sealed));
}

TEST_F(FirestoreStoreTest, ACorruptedNewestCheckpointIsSkippedAndReported) {
  SealedCheckpoint older = SealedAt("agent-a", 1);
  SealedCheckpoint newer = SealedAt("agent-a", 2);
  STORE_ASSERT_OK(store_->Put(older, {}));
  STORE_ASSERT_OK(store_->Put(newer, {}));
  // Someone edits the stored draft behind the store's back.
  json patch = {
      {"fields",
       {{"contextSummary",
         {{"mapValue", {{"fields", {{"draftContent", {{"stringValue", "tampered"}}}}}}}}}}}};
  auto reply =
      emulator_->Request("PATCH",
                         DocPath("checkpoints/agent-a/snapshots/" + newer.doc.checkpoint_id) +
                             "?updateMask.fieldPaths=contextSummary.draftContent",
                         patch.dump());
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->first, 200) << reply->second;

  auto latest = store_->GetLatestVerified("agent-a");
  STORE_ASSERT_OK(latest);
  EXPECT_EQ(latest->checkpoint.checkpoint_id, older.doc.checkpoint_id);
  ASSERT_EQ(latest->skipped.size(), 1u);
  EXPECT_EQ(latest->skipped[0].checkpoint_id, newer.doc.checkpoint_id);
  EXPECT_EQ(latest->skipped[0].sequence_number, 2);
  EXPECT_NE(latest->skipped[0].reason.find("DATA_LOSS"), std::string::npos);
  EXPECT_EQ(store_->GetById("agent-a", newer.doc.checkpoint_id).status().code(),
            StatusCode::kDataLoss);
}

TEST_F(FirestoreStoreTest, ASecondWriterWithStaleCachesGetsAConflictNotAnOverwrite) {
  auto other = OpenEmulatorStore(emulator_->host_port(), project_);
  for (int seq = 1; seq <= 3; ++seq) STORE_ASSERT_OK(store_->Put(SealedAt("agent-a", seq), {}));
  Checkpoint theirs = MakeCheckpoint("agent-a", 4);
  theirs.checkpoint_id = TestUuid(0xbbbb, 4);
  STORE_ASSERT_OK(other->Put(SealForTest(theirs), {}));
  // store_ still believes the agent is at sequence 3.
  Checkpoint mine = MakeCheckpoint("agent-a", 4);
  mine.checkpoint_id = TestUuid(0xaaaa, 4);
  EXPECT_EQ(store_->Put(SealForTest(mine), {}).status().code(), StatusCode::kAlreadyExists);
  auto at4 = store_->GetBySequence("agent-a", 4);
  STORE_ASSERT_OK(at4);
  EXPECT_EQ(at4->checkpoint_id, theirs.checkpoint_id);
  // After the conflict it knows better and continues above the other writer.
  STORE_ASSERT_OK(store_->Put(SealedAt("agent-a", 5), {}));
  EXPECT_EQ(store_->GetAgent("agent-a")->last_sequence, 5);
}

TEST_F(FirestoreStoreTest, FirestoreErrorBodiesAreCarriedIntoTheStatus) {
  ASSERT_TRUE(emulator_->SetFaults({{"errorRate", 1.0}, {"errorStatus", 403}}).ok());
  auto denied = store_->Put(SealedAt("agent-a", 1), {});
  EXPECT_EQ(denied.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(denied.status().message().find("PERMISSION_DENIED: injected fault"), std::string::npos)
      << denied.status().ToString();

  ASSERT_TRUE(emulator_->SetFaults({{"errorRate", 1.0}, {"errorStatus", 503}}).ok());
  // A deadline long enough for several replies even from a sanitizer build on a busy machine.
  auto short_deadline = OpenEmulatorStore(emulator_->host_port(), project_, 1000, 1500);
  uint64_t before_stats = (*emulator_->Stats())["requests"].get<uint64_t>();
  auto unavailable = short_deadline->GetLatestVerified("agent-a");
  EXPECT_EQ(unavailable.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(unavailable.status().message().find("UNAVAILABLE"), std::string::npos);
  EXPECT_GT((*emulator_->Stats())["requests"].get<uint64_t>() - before_stats, 1u)
      << "503 must be retried";
}

TEST_F(FirestoreStoreTest, OpenStoreHonoursFirestoreEmulatorHost) {
  ::setenv("FIRESTORE_EMULATOR_HOST", emulator_->host_port().c_str(), 1);
  auto store = OpenStore("firestore://projects/" + project_ + "/databases/(default)");
  ::unsetenv("FIRESTORE_EMULATOR_HOST");
  STORE_ASSERT_OK(store);
  STORE_ASSERT_OK((*store)->Ping());
  STORE_ASSERT_OK((*store)->Put(SealedAt("agent-a", 1), {}));
  STORE_ASSERT_OK(store_->GetBySequence("agent-a", 1));
  for (const char* bad : {"firestore://projects//databases/x", "firestore://projects/p",
                          "firestore://projects/p/databases/", "firestore://p/d"}) {
    EXPECT_EQ(OpenStore(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST_F(FirestoreStoreTest, PingFailsWhenNothingListens) {
  STORE_ASSERT_OK(store_->Ping());
  auto dead = OpenEmulatorStore("127.0.0.1:1", project_, 200, 300);
  Status s = dead->Ping();
  EXPECT_TRUE(s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kDeadlineExceeded)
      << s.ToString();
}

}  // namespace
}  // namespace agentckpt::testing
