// CheckpointWriter against a real SQLite store and a real nats-server with JetStream.
#include "context/checkpoint_writer.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <set>
#include <thread>

#include "checkpoint/canonical.h"
#include "common/fake_env.h"
#include "common/ids.h"
#include "nats/nats_link.h"
#include "tests/sidecar/sidecar_process.h"
#include "tests/support/jetstream_fixture.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

using nlohmann::json;

constexpr char kAgent[] = "agent-writer";

class SidecarCheckpointWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenStore("sqlite://" + dir_.File("store.db"));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    ASSERT_TRUE(
        context_.Replace(json::parse(testing::FixtureContextBody("checkpoint-16k.json"))).ok());
  }

  std::unique_ptr<CheckpointWriter> MakeWriter(Env* env, int keep, PositionReader position = {}) {
    WriterOptions o;
    o.agent_id = kAgent;
    o.keep = keep;
    o.ttl_days = 3;
    return std::make_unique<CheckpointWriter>(
        env, store_.get(), &context_, &metrics_, o, std::move(position), WorkspaceReader(),
        [this](const std::string& event, const json& payload) {
          std::lock_guard<std::mutex> lock(events_mu_);
          events_.emplace_back(event, payload);
        });
  }

  testing::TempDir dir_;
  std::unique_ptr<CheckpointStore> store_;
  ContextState context_;
  Metrics metrics_;
  std::mutex events_mu_;
  std::vector<std::pair<std::string, json>> events_;
};

TEST_F(SidecarCheckpointWriterTest, WritesASealedCheckpointAndAnnouncesIt) {
  auto writer = MakeWriter(Env::Default(), 48);
  auto r = writer->Write(TriggerReason::kPreCompaction);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->sequence_number, 1);
  EXPECT_TRUE(IsUuidV4(r->checkpoint_id));
  auto stored = store_->GetById(kAgent, r->checkpoint_id);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->trigger_reason, TriggerReason::kPreCompaction);
  EXPECT_EQ(stored->size_bytes, r->size_bytes);
  EXPECT_EQ(stored->ttl_days, 3);
  EXPECT_EQ(stored->context_summary, context_.Snapshot().summary);
  EXPECT_EQ(stored->active_task, context_.Snapshot().active_task);
  EXPECT_FALSE(stored->nats_position.has_value());
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].first, "checkpoint.created");
  EXPECT_EQ(events_[0].second["checkpointId"], r->checkpoint_id);
  EXPECT_EQ(events_[0].second["sequenceNumber"], 1);
  EXPECT_EQ(events_[0].second["sizeBytes"], r->size_bytes);
  EXPECT_EQ(events_[0].second["trigger"], "pre_compaction");
  EXPECT_TRUE(events_[0].second["durationMs"].is_number());
}

TEST_F(SidecarCheckpointWriterTest, ConcurrentTriggersNeverInterleaveOrReuseASequence) {
  auto writer = MakeWriter(Env::Default(), 1000);
  const TriggerReason triggers[] = {TriggerReason::kManual, TriggerReason::kPreCompaction,
                                    TriggerReason::kTaskPhaseChange, TriggerReason::kPeriodic};
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (TriggerReason t : triggers) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        json tool = {{"toolName", "t"},     {"timestamp", "2026-11-03T02:40:00.000Z"},
                     {"inputSummary", "i"}, {"outputSummary", "o"},
                     {"durationMs", i},     {"success", true}};
        if (!context_.AppendToolCall(tool).ok()) ++failures;
        if (!writer->Write(t).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  auto list = store_->List(kAgent, 1000);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 100u);
  std::set<int64_t> seqs;
  std::set<std::string> ids;
  for (const auto& info : *list) {
    seqs.insert(info.sequence_number);
    ids.insert(info.checkpoint_id);
  }
  EXPECT_EQ(seqs.size(), 100u);
  EXPECT_EQ(*seqs.begin(), 1);
  EXPECT_EQ(*seqs.rbegin(), 100);
  EXPECT_EQ(ids.size(), 100u);
}

TEST_F(SidecarCheckpointWriterTest, PeriodicWritesOnlyWhenTheContextChanged) {
  auto writer = MakeWriter(Env::Default(), 48);
  auto first = writer->WriteIfChanged(TriggerReason::kPeriodic);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->has_value());  // the fixture PUT is a change
  auto second = writer->WriteIfChanged(TriggerReason::kPeriodic);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->has_value());
  ASSERT_TRUE(context_.MergePatch({{"activeTask", {{"progress", 99}}}}).ok());
  auto third = writer->WriteIfChanged(TriggerReason::kPeriodic);
  ASSERT_TRUE(third.ok());
  ASSERT_TRUE(third->has_value());
  EXPECT_EQ((*third)->sequence_number, 2);
  // Any trigger covers the revision: no periodic checkpoint repeats it.
  ASSERT_TRUE(context_.MergePatch({{"activeTask", {{"progress", 98}}}}).ok());
  ASSERT_TRUE(writer->Write(TriggerReason::kManual).ok());
  auto fourth = writer->WriteIfChanged(TriggerReason::kPeriodic);
  ASSERT_TRUE(fourth.ok());
  EXPECT_FALSE(fourth->has_value());
  EXPECT_EQ(store_->List(kAgent, 10)->size(), 3u);
}

TEST_F(SidecarCheckpointWriterTest, NothingIsWrittenAfterTheFinalCheckpoint) {
  auto writer = MakeWriter(Env::Default(), 48);
  auto final_cp = writer->WriteFinal(TriggerReason::kPreShutdown);
  ASSERT_TRUE(final_cp.ok()) << final_cp.status().ToString();
  EXPECT_EQ(writer->Write(TriggerReason::kManual).status().code(), StatusCode::kUnavailable);
  ASSERT_TRUE(context_.MergePatch({{"activeTask", {{"progress", 1}}}}).ok());
  EXPECT_EQ(writer->WriteIfChanged(TriggerReason::kPeriodic).status().code(),
            StatusCode::kUnavailable);
  auto list = store_->List(kAgent, 10);
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ(list->front().trigger_reason, TriggerReason::kPreShutdown);
}

TEST_F(SidecarCheckpointWriterTest, ASecondWriterConflictIsReportedNotRetried) {
  // Two writers drawing the same checkpoint id (same random stream) for the same agent: the
  // second Put conflicts.
  FakeEnv env_a(1793760300000, 7);
  FakeEnv env_b(1793760300000, 7);
  auto a = MakeWriter(&env_a, 48);
  auto b = MakeWriter(&env_b, 48);
  ASSERT_TRUE(a->Write(TriggerReason::kManual).ok());
  const json before = context_.ToJson();
  auto conflict = b->Write(TriggerReason::kManual);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(context_.ToJson(), before);
  EXPECT_EQ(store_->List(kAgent, 10)->size(), 1u);
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_EQ(events_[1].first, "checkpoint.failed");
  EXPECT_EQ(events_[1].second["operation"], "checkpoint");
  EXPECT_EQ(events_[1].second["trigger"], "manual");
  EXPECT_NE(events_[1].second["reason"].get<std::string>().find("ALREADY_EXISTS"),
            std::string::npos);
  EXPECT_NE(
      metrics_.Render().find(
          "agentckpt_checkpoint_failures_total{trigger=\"manual\",reason=\"already_exists\"} 1"),
      std::string::npos);
}

TEST_F(SidecarCheckpointWriterTest, NatsPositionIsTheConsumersAckFloor) {
  testing::NatsServerProcess nats;
  auto client = testing::JetStreamTestClient::Connect(nats.url());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto& js = **client;
  ASSERT_TRUE(js.CreateStream("INBOX", {"inbox.>"}).ok());
  ASSERT_TRUE(js.CreateDurablePullConsumer("INBOX", "agent", "inbox.agent-writer.>").ok());
  ASSERT_TRUE(js.PublishN("inbox.agent-writer.task", 10, "msg-").ok());
  ASSERT_TRUE(js.PublishN("inbox.other.task", 3, "other-").ok());  // not on the filter
  ASSERT_TRUE(js.FetchAndAckThrough("INBOX", "agent", 6).ok());

  NatsLinkOptions o;
  o.url = nats.url();
  auto link = NatsLink::Connect(o, &metrics_);
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  NatsLink* l = link->get();
  auto writer =
      MakeWriter(Env::Default(), 48, [l] { return l->ReadConsumerPosition("INBOX", "agent"); });
  auto r = writer->Write(TriggerReason::kManual);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto consumer = js.SnapshotConsumer("INBOX", "agent");
  ASSERT_TRUE(consumer.ok());
  auto stored = store_->GetById(kAgent, r->checkpoint_id);
  ASSERT_TRUE(stored.ok());
  ASSERT_TRUE(stored->nats_position.has_value());
  EXPECT_EQ(stored->nats_position->stream_name, "INBOX");
  EXPECT_EQ(stored->nats_position->consumer_name, "agent");
  EXPECT_EQ(stored->nats_position->last_acked_sequence, consumer->ack_floor_stream_seq);
  EXPECT_EQ(stored->nats_position->last_acked_sequence, 6u);
  EXPECT_EQ(stored->nats_position->pending_message_count, consumer->num_pending);
  EXPECT_EQ(stored->nats_position->pending_message_count, 4u);

  // With NATS gone the checkpoint is still written, with the last known position.
  nats.Kill();
  auto during = writer->Write(TriggerReason::kManual);
  ASSERT_TRUE(during.ok()) << during.status().ToString();
  auto stored2 = store_->GetById(kAgent, during->checkpoint_id);
  ASSERT_TRUE(stored2.ok());
  ASSERT_TRUE(stored2->nats_position.has_value());
  EXPECT_EQ(stored2->nats_position->last_acked_sequence, 6u);
  EXPECT_NE(metrics_.Render().find("agentckpt_nats_position_stale_total 1"), std::string::npos);
  (*link)->Close();
}

}  // namespace
}  // namespace agentckpt

namespace agentckpt {
namespace {

// The ack-then-update race (docs/journal.md, "The consistent cut"): the agent applies message
// k's update to its context and then acks k. Here it does so while the writer reads the
// consumer's position, which then already counts k. The checkpoint must hold k's effect: a
// recorded ack floor never covers a message whose update the snapshot lacks.
TEST_F(SidecarCheckpointWriterTest, AckThenUpdateRaceNeverLosesAMessage) {
  uint64_t acked = 0;
  PositionReader position = [&]() -> StatusOr<NatsPosition> {
    ++acked;  // message `acked` arrives: update first, then ack
    EXPECT_TRUE(
        context_
            .MergePatch(json{{"contextSummary", {{"completedSteps", static_cast<int64_t>(acked)}}}})
            .ok());
    return NatsPosition{"INBOX", "agent", acked, 0};
  };
  auto writer = MakeWriter(Env::Default(), 48, position);
  for (int i = 0; i < 5; ++i) {
    auto r = writer->Write(TriggerReason::kManual);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto cp = store_->GetById(kAgent, r->checkpoint_id);
    ASSERT_TRUE(cp.ok());
    ASSERT_TRUE(cp->nats_position.has_value());
    EXPECT_GE(static_cast<uint64_t>(cp->context_summary.completed_steps),
              cp->nats_position->last_acked_sequence)
        << "the checkpoint counts a message as handled whose update it does not hold";
  }
}

}  // namespace
}  // namespace agentckpt
