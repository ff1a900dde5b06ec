#include "restore/restorer.h"

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/canonical.h"
#include "common/fake_env.h"
#include "restore/token_counter.h"
#include "tests/restore/prompt_test_util.h"
#include "tests/restore/restorer_fixture.h"
#include "tests/support/fixtures.h"
#include "tests/support/forwarding_store.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

using testing::kAgent;
using testing::MakeReplay;
using testing::RestorerTest;

TEST_F(RestorerTest, ColdStartIsAnOkResult) {
  auto r = Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->cold_start);
  EXPECT_EQ(replay_->calls, 0);
  EXPECT_NE(r->prompt.find("cold start"), std::string::npos);
  EXPECT_EQ(events_->log(), (std::vector<std::string>{"status:recovering@recovering",
                                                      "status:active@active", "restored@active"}));
  nlohmann::json ev = events_->restored().at(0);
  EXPECT_EQ(ev["coldStart"], true);
  EXPECT_TRUE(ev["checkpointId"].is_null());
  EXPECT_EQ(StoredStatus(), "active");
}

// The sidecar loads once at start and hands that load to the restore: the restore uses it as
// it is (here an older checkpoint than the store's newest, to tell them apart) and counts its
// duration as the load phase.
TEST_F(RestorerTest, APreloadedCheckpointIsUsedWithoutLoadingAgain) {
  Put(1);
  Checkpoint second = Put(2);
  auto loaded = store_->GetLatestVerified(kAgent);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->checkpoint.sequence_number, 2);
  Put(3);
  replay_->result = MakeReplay(2, 1, 300);
  PreloadedLatest preloaded{std::move(loaded).value(), 4.5};
  Restorer r(&env_, store_.get(), replay_.get(), events_.get(), RestoreOptions{});
  auto result = r.Run(kAgent, &preloaded);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->sequence_number, 2);
  EXPECT_EQ(result->checkpoint_id, second.checkpoint_id);
  EXPECT_EQ(replay_->last_position, *second.nats_position);
  EXPECT_DOUBLE_EQ(result->timings.load_ms, 4.5);
  EXPECT_DOUBLE_EQ(result->timings.total_ms, 4.5 + 7.0);  // the replay moved the clock 7 ms
  EXPECT_EQ(StoredStatus(), "active");
  EXPECT_EQ(events_->log(), (std::vector<std::string>{"status:recovering@recovering",
                                                      "status:active@active", "restored@active"}));
}

// A checkpoint past its expireAt (CKPT_TTL_DAYS) is never restored, even while the store still
// holds it: a cold start that names it.
TEST_F(RestorerTest, AnExpiredCheckpointIsNeverUsed) {
  Checkpoint cp = Put(3);
  env_.SetUnixMillis(cp.expire_at_ms);  // expireAt is "at or before now"
  auto r = Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->cold_start);
  EXPECT_EQ(r->checkpoint_id, "");
  EXPECT_EQ(replay_->calls, 0);
  ASSERT_TRUE(r->expired.has_value());
  EXPECT_EQ(r->expired->checkpoint_id, cp.checkpoint_id);
  EXPECT_NE(r->prompt.find("cold start"), std::string::npos);
  nlohmann::json ev = events_->restored().at(0);
  EXPECT_EQ(ev["coldStart"], true);
  EXPECT_EQ(ev["expired"]["sequenceNumber"], 3);
  // A millisecond earlier it is used.
  env_.SetUnixMillis(cp.expire_at_ms - 1);
  auto before = Run();
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(before->cold_start);
  EXPECT_EQ(before->sequence_number, 3);
}

// Messages the stream no longer holds, and a replay cut by its deadline, are said in the prompt
// and in checkpoint.restored, with the counts the replay gave.
TEST_F(RestorerTest, LostMessagesAndAPartialReplayAreSaid) {
  Put(3);
  replay_->result = MakeReplay(5, 3, 300);
  replay_->result.lost = 4;
  replay_->result.partial = true;
  replay_->result.partial_reason = "the read deadline (5000 ms) passed after 8 of 20 messages";
  auto r = Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->lost, 4u);
  EXPECT_NE(r->prompt.find("MESSAGES LOST: the stream no longer holds 4 messages"),
            std::string::npos)
      << r->prompt;
  EXPECT_NE(r->prompt.find("REPLAY PARTIAL"), std::string::npos);
  nlohmann::json ev = events_->restored().at(0);
  EXPECT_EQ(ev["lost"], 4);
  EXPECT_EQ(ev["replayPartial"], replay_->result.partial_reason);
  EXPECT_EQ(ev["handled"], r->handled);
}

TEST_F(RestorerTest, UsesTheLatestCheckpointReplaysAndGoesRecoveringThenActive) {
  Put(1);
  Put(2);
  Checkpoint latest = Put(3);
  replay_->result = MakeReplay(5, 3, 300);
  auto r = Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->cold_start);
  EXPECT_EQ(r->sequence_number, 3);
  EXPECT_EQ(r->checkpoint_id, latest.checkpoint_id);
  EXPECT_TRUE(r->skipped.empty());
  EXPECT_FALSE(r->stale);
  EXPECT_EQ(r->checkpoint_age_ms, 60'000);
  EXPECT_EQ(replay_->calls, 1);
  EXPECT_EQ(replay_->last_position, *latest.nats_position);
  EXPECT_EQ(replay_->last_max_messages, 50u);
  EXPECT_EQ(replay_->last_max_body_bytes, 2048u);
  EXPECT_EQ(replay_->status_during_read, "recovering");
  EXPECT_EQ(r->handled, 3u);
  EXPECT_EQ(r->pending, 2u);
  EXPECT_EQ(r->replayed, 5u);
  EXPECT_EQ(r->truncated, 0u);
  EXPECT_DOUBLE_EQ(r->timings.replay_ms, 7.0);  // the fake clock moved 7 ms during the read
  EXPECT_DOUBLE_EQ(r->timings.load_ms, 0.0);
  EXPECT_DOUBLE_EQ(r->timings.total_ms, 7.0);
  EXPECT_LE(r->prompt_tokens, 4000u);
  EXPECT_EQ(r->prompt_tokens, CountTokens(r->prompt));
  EXPECT_EQ(StoredStatus(), "active");
  EXPECT_EQ(events_->log(), (std::vector<std::string>{"status:recovering@recovering",
                                                      "status:active@active", "restored@active"}));
  nlohmann::json ev = events_->restored().at(0);
  EXPECT_EQ(ev["checkpointId"], latest.checkpoint_id);
  EXPECT_EQ(ev["sequenceNumber"], 3);
  EXPECT_EQ(ev["stale"], false);
  EXPECT_EQ(ev["skippedCorrupt"], 0);
  EXPECT_EQ(ev["handled"], 3);
  EXPECT_EQ(ev["pending"], 2);
  EXPECT_EQ(ev["replayed"], 5);
  EXPECT_EQ(ev["truncated"], 0);
  EXPECT_EQ(ev["promptTokens"], r->prompt_tokens);
  EXPECT_EQ(ev["replayMs"], 7.0);
  EXPECT_EQ(ev["totalMs"], 7.0);
  for (const char* k : {"loadMs", "workspaceMs", "promptMs", "resumeMs", "coldStart"}) {
    EXPECT_TRUE(ev.contains(k)) << k;
  }
}

TEST_F(RestorerTest, CorruptedLatestFallsBackToThePrevious) {
  Put(1);
  Checkpoint second = Put(2);
  Checkpoint third = Put(3);
  Corrupt(3);
  auto r = Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->sequence_number, 2);
  EXPECT_EQ(r->checkpoint_id, second.checkpoint_id);
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_EQ(r->skipped[0].sequence_number, 3);
  EXPECT_FALSE(r->skipped[0].reason.empty());
  EXPECT_NE(r->prompt.find("FALLBACK USED: 1 newer checkpoint"), std::string::npos);
  EXPECT_NE(r->prompt.find("sequence 3"), std::string::npos);
  nlohmann::json ev = events_->restored().at(0);
  EXPECT_EQ(ev["skippedCorrupt"], 1);
  EXPECT_EQ(ev["skipped"][0]["sequenceNumber"], 3);
  EXPECT_EQ(replay_->last_position, *second.nats_position);  // replay from the one used
}

TEST_F(RestorerTest, OldCheckpointIsUsedAndMarkedStale) {
  Checkpoint cp = Put(3);
  env_.SetUnixMillis(cp.timestamp_ms + 900'001);
  auto r = Run();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->stale);
  EXPECT_EQ(r->checkpoint_id, cp.checkpoint_id);
  EXPECT_NE(r->prompt.find("STALE CHECKPOINT"), std::string::npos);
  EXPECT_NE(r->prompt.find("Re-verify external state"), std::string::npos);
  EXPECT_EQ(events_->restored().at(0)["stale"], true);

  env_.SetUnixMillis(cp.timestamp_ms + 900'000);  // exactly at the limit: not stale
  auto fresh = Run();
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->stale);
  EXPECT_EQ(fresh->prompt.find("STALE"), std::string::npos);

  RestoreOptions strict;
  strict.stale_after_ms = 30'000;
  auto r2 = Run(strict);
  ASSERT_TRUE(r2.ok());
  EXPECT_TRUE(r2->stale);
}

TEST_F(RestorerTest, ReplayFailureIsAWarningNotAFailedRestore) {
  Put(3);
  replay_->error = UnavailableError("no JetStream responders");
  auto r = Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(r->replay_error.find("no JetStream responders"), std::string::npos);
  EXPECT_NE(r->prompt.find("REPLAY UNAVAILABLE"), std::string::npos);
  EXPECT_EQ(events_->restored().at(0)["replayError"], r->replay_error);
  EXPECT_EQ(StoredStatus(), "active");
}

TEST_F(RestorerTest, NoReplaySourceSaysSoInThePrompt) {
  Put(3);
  auto r = Run(RestoreOptions{}, /*with_replay=*/false);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->prompt.find("No message stream is configured"), std::string::npos);
}

TEST_F(RestorerTest, TruncatedReplayAndMaxCheckpointStayWithinTheLimit) {
  Checkpoint max = testing::LoadFixtureCheckpoint("checkpoint-max.json");
  max.agent_id = kAgent;
  max.sequence_number = 5;
  max.timestamp_ms = env_.NowUnixMillis() - 1000;
  auto sealed = Seal(max);
  ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
  ASSERT_TRUE(store_->Put(*sealed, PutOptions{}).ok());
  replay_->result = MakeReplay(50, 40, 2048);
  replay_->result.truncated = 113;
  auto r = Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->truncated, 113u);
  EXPECT_EQ(r->replayed, 50u);
  EXPECT_LE(r->prompt_tokens, 4000u);
  EXPECT_LE(CountTokens(r->prompt), 4000u);
  EXPECT_NE(r->prompt.find("REPLAY TRUNCATED: 113 older messages"), std::string::npos);
  EXPECT_EQ(events_->restored().at(0)["truncated"], 113);
  EXPECT_FALSE(r->prompt_cut.empty());
}

TEST_F(RestorerTest, StoreFailureFailsTheRestoreAndPublishesFailed) {
  // A store whose reads fail (the real SQLite store behind it for the status).
  class UnreadableStore : public testing::ForwardingStore {
   public:
    using ForwardingStore::ForwardingStore;
    StatusOr<LatestVerified> GetLatestVerified(const std::string&) override {
      return UnavailableError("database is locked");
    }
  };
  UnreadableStore broken(store_.get());
  Restorer r(&env_, &broken, replay_.get(), events_.get(), RestoreOptions{});
  auto result = r.Run(kAgent);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(events_->log(),
            (std::vector<std::string>{"status:recovering@recovering", "failed:UNAVAILABLE"}));
  EXPECT_TRUE(events_->restored().empty());
}

TEST_F(RestorerTest, ConcurrentRunsAreSerialised) {
  Put(3);
  Restorer r(&env_, store_.get(), replay_.get(), events_.get(), RestoreOptions{});
  std::thread a([&] { EXPECT_TRUE(r.Run(kAgent).ok()); });
  std::thread b([&] { EXPECT_TRUE(r.Run(kAgent).ok()); });
  a.join();
  b.join();
  std::vector<std::string> one = {"status:recovering@recovering", "status:active@active",
                                  "restored@active"};
  std::vector<std::string> want = one;
  want.insert(want.end(), one.begin(), one.end());
  EXPECT_EQ(events_->log(), want);
}

}  // namespace
}  // namespace agentckpt
