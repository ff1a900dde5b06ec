// Hedged and retried Firestore requests (store/firestore_http.h) against the emulator (a real
// child process) with scripted faults: the next requests get exactly the faults named, so each
// case is deterministic. Scripted delays are long (seconds) next to the hedge delay (kHedgeMs),
// and the hedge delay is long next to an unscripted answer, even from a sanitizer build on a
// busy machine, so which attempt answers does not depend on the machine's speed.
#include <gtest/gtest.h>

#include <cstdlib>

#include "store/firestore/firestore_http.h"
#include "store/firestore/firestore_store.h"
#include "tests/firestore/emulator_suite.h"
#include "tests/store/store_test_util.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

// 500 ms: an unscripted request answering later than this would be hedged and counted.
constexpr int64_t kHedgeMs = 500;

class FirestoreHedgeTest : public EmulatorSuite {
 protected:
  void SetUp() override { StartTest("h-"); }

  std::unique_ptr<FirestoreHttp> Http(int64_t hedge_after_ms, int64_t deadline_ms = 20'000) {
    FirestoreHttpOptions o;
    o.base_url = "http://" + emulator_->host_port();
    o.request_timeout_ms = 10'000;
    o.overall_deadline_ms = deadline_ms;
    o.hedge_after_ms = hedge_after_ms;
    return std::make_unique<FirestoreHttp>(std::move(o));
  }
  std::string Docs() const { return "projects/" + project_ + "/databases/(default)/documents"; }
  // A :commit creating c/<id> with {x: value}, only if it does not exist.
  json CreateBody(const std::string& id, int value) const {
    return {
        {"writes", json::array({{{"update",
                                  {{"name", Docs() + "/c/" + id},
                                   {"fields", {{"x", {{"integerValue", std::to_string(value)}}}}}}},
                                 {"currentDocument", {{"exists", false}}}}})}};
  }
  StatusOr<json> Create(FirestoreHttp* http, const std::string& id, int value, CallInfo* info) {
    json body = CreateBody(id, value);
    return http->Call("POST", "/v1/" + Docs() + ":commit", &body, info, Hedge::kYes);
  }
  // A GET of c/<id>, hedged or not.
  StatusOr<json> Get(FirestoreHttp* http, const std::string& id, CallInfo* info,
                     Hedge hedge = Hedge::kYes) {
    return http->Call("GET", "/v1/" + Docs() + "/c/" + id, nullptr, info, hedge);
  }
  Status Script(std::initializer_list<const char*> faults, int delay_ms) {
    return emulator_->SetFaults({{"script", faults}, {"delayMs", delay_ms}});
  }
  int64_t StoredX(const std::string& id) {
    auto reply = emulator_->Request("GET", "/v1/" + Docs() + "/c/" + id);
    if (!reply.ok() || reply->first != 200) return -1;
    return std::stoll(json::parse(reply->second)["fields"]["x"]["integerValue"].get<std::string>());
  }
};

TEST_F(FirestoreHedgeTest, ASlowReadIsAnsweredByItsHedge) {
  auto http = Http(kHedgeMs);
  CallInfo info;
  ASSERT_TRUE(Create(http.get(), "d", 7, &info).ok());
  ASSERT_TRUE(Script({"delay"}, 5000).ok());
  auto got = Get(http.get(), "d", &info);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)["fields"]["x"]["integerValue"], "7");
  EXPECT_EQ(info.attempts, 2);
  EXPECT_EQ(info.hedges, 1);
  EXPECT_EQ(info.winner, 2);
}

TEST_F(FirestoreHedgeTest, ACallNotMarkedHedgeableWaitsForItsOnlyRequest) {
  auto http = Http(kHedgeMs);
  CallInfo info;
  ASSERT_TRUE(Create(http.get(), "d", 7, &info).ok());
  ASSERT_TRUE(Script({"delay"}, 3 * kHedgeMs).ok());  // slow enough to be hedged if it could be
  auto got = Get(http.get(), "d", &info, Hedge::kNo);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(info.attempts, 1);
  EXPECT_EQ(info.hedges, 0);
  EXPECT_EQ(info.winner, 1);
}

TEST_F(FirestoreHedgeTest, HedgingOffSendsOneRequest) {
  auto http = Http(0);
  ASSERT_TRUE(Script({"delay"}, 300).ok());
  CallInfo info;
  ASSERT_TRUE(Create(http.get(), "d", 1, &info).ok());
  EXPECT_EQ(info.attempts, 1);
  EXPECT_EQ(info.hedges, 0);
}

// The first commit is held before it is applied; its hedge creates the document; the held one
// then fails its precondition, harmlessly.
TEST_F(FirestoreHedgeTest, ASlowCommitIsAppliedOnceByItsHedge) {
  auto http = Http(kHedgeMs);
  ASSERT_TRUE(Script({"delay"}, 2000).ok());
  CallInfo info;
  auto done = Create(http.get(), "d", 5, &info);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(info.winner, 2);
  EXPECT_EQ(StoredX("d"), 5);
}

// The first commit is applied at once but its reply is late: the hedge meets the precondition
// failure the first one caused, and the Call waits for the first one's success.
TEST_F(FirestoreHedgeTest, AConflictFromTheHedgeWaitsForTheTwinThatApplied) {
  auto http = Http(kHedgeMs);
  ASSERT_TRUE(Script({"late-reply"}, 1500).ok());
  CallInfo info;
  auto done = Create(http.get(), "d", 9, &info);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(info.attempts, 2);
  EXPECT_EQ(info.winner, 1);
  EXPECT_TRUE(info.maybe_applied_earlier);
  EXPECT_EQ(StoredX("d"), 9);
}

TEST_F(FirestoreHedgeTest, AConflictOnBothTwinsIsReturned) {
  auto http = Http(kHedgeMs);
  CallInfo info;
  ASSERT_TRUE(Create(http.get(), "d", 1, &info).ok());
  ASSERT_TRUE(Script({"late-reply"}, 1500).ok());
  auto again = Create(http.get(), "d", 2, &info);
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists) << again.status().ToString();
  EXPECT_EQ(info.attempts, 2);
  EXPECT_EQ(info.winner, 0);
  EXPECT_EQ(StoredX("d"), 1);
}

// Both the first copy and its hedge are slow: a third copy answers.
TEST_F(FirestoreHedgeTest, TwoSlowCopiesGetASecondHedge) {
  auto http = Http(kHedgeMs);
  ASSERT_TRUE(Script({"delay", "delay"}, 5000).ok());
  CallInfo info;
  auto done = Get(http.get(), "none", &info);
  EXPECT_EQ(done.status().code(), StatusCode::kNotFound) << done.status().ToString();
  EXPECT_EQ(info.attempts, 3);
  EXPECT_EQ(info.hedges, 2);
}

// The first copy is slow and its hedge is refused with a 503: a replacement goes out after the
// backoff instead of waiting for the slow one.
TEST_F(FirestoreHedgeTest, AFailedHedgeIsReplacedWhileTheSlowCopyIsOut) {
  auto http = Http(kHedgeMs);
  ASSERT_TRUE(Create(http.get(), "d", 3, nullptr).ok());
  ASSERT_TRUE(Script({"delay", "error"}, 5000).ok());
  CallInfo info;
  auto got = Get(http.get(), "d", &info);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(info.attempts, 3);
  EXPECT_EQ(info.winner, 3);
}

TEST_F(FirestoreHedgeTest, ErrorsAndDroppedRepliesAreRetried) {
  auto http = Http(kHedgeMs);
  ASSERT_TRUE(Script({"error", "drop"}, 0).ok());
  CallInfo info;
  auto done = Get(http.get(), "none", &info);
  EXPECT_EQ(done.status().code(), StatusCode::kNotFound) << done.status().ToString();
  EXPECT_EQ(info.attempts, 3);
  EXPECT_EQ(info.winner, 0);
}

TEST_F(FirestoreHedgeTest, TheDeadlineBoundsACallWhoseRequestsAllHang) {
  auto http = Http(kHedgeMs, /*deadline_ms=*/2000);
  ASSERT_TRUE(Script({"delay", "delay", "delay"}, 5000).ok());
  CallInfo info;
  auto done = Get(http.get(), "none", &info);
  EXPECT_EQ(done.status().code(), StatusCode::kDeadlineExceeded) << done.status().ToString();
  EXPECT_EQ(info.attempts, 3);  // the first and two hedges
  EXPECT_TRUE(info.maybe_applied_earlier);
}

TEST_F(FirestoreHedgeTest, EmulatorRejectsAnUnknownScriptEntry) {
  auto reply = emulator_->Request("PUT", "/emulator/v1/faults", R"({"script":["slow"]})");
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->first, 400);
  EXPECT_NE(reply->second.find("unknown script entry"), std::string::npos) << reply->second;
}

// Store level: a status write whose reply is lost after it was applied is written again (its
// updateTime precondition fails, the record is re-read), and the next Put needs no re-read.
TEST_F(FirestoreHedgeTest, StatusWriteSurvivesALostReplyAndKeepsTheRecordCached) {
  // Hedging off: the request count below must not include a hedge of a slow answer.
  auto store = OpenEmulatorStore(emulator_->host_port(), project_, 2000, 20000,
                                 /*hedge_after_ms=*/0);
  ASSERT_NE(store, nullptr);
  STORE_ASSERT_OK(store->Put(SealedAt("agent-a", 1), PutOptions()));
  ASSERT_TRUE(Script({"drop"}, 0).ok());
  Status set = store->SetAgentStatus("agent-a", "recovering", 1000);
  ASSERT_TRUE(set.ok()) << set.ToString();
  auto record = store->GetAgent("agent-a");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->status, "recovering");
  EXPECT_EQ(record->last_sequence, 1);
  STORE_ASSERT_OK(store->SetAgentStatus("agent-a", "active", 2000));
  uint64_t before = store->requests_sent();
  STORE_ASSERT_OK(store->Put(SealedAt("agent-a", 2), PutOptions()));
  EXPECT_EQ(store->requests_sent() - before, 1u) << "the Put re-read the agent record";
  record = store->GetAgent("agent-a");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->status, "active");
  EXPECT_EQ(record->last_sequence, 2);
}

TEST_F(FirestoreHedgeTest, OpenUrlRejectsABadHedgeSetting) {
  ::setenv("FIRESTORE_EMULATOR_HOST", emulator_->host_port().c_str(), 1);
  for (const char* bad : {"-1", "fast", "60001", "5ms"}) {
    ::setenv("CKPT_FIRESTORE_HEDGE_MS", bad, 1);
    auto store = FirestoreStore::OpenUrl("firestore://projects/p/databases/(default)");
    EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(store.status().message().find("CKPT_FIRESTORE_HEDGE_MS"), std::string::npos);
  }
  ::setenv("CKPT_FIRESTORE_HEDGE_MS", "0", 1);
  EXPECT_TRUE(FirestoreStore::OpenUrl("firestore://projects/p/databases/(default)").ok());
  ::unsetenv("CKPT_FIRESTORE_HEDGE_MS");
  ::unsetenv("FIRESTORE_EMULATOR_HOST");
}

}  // namespace
}  // namespace agentckpt::testing
