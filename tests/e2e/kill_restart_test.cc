// Kill-and-restart loop with the real binary, nats-server and SQLite store: each cycle the agent
// changes its context, the sidecar confirms a checkpoint, the agent handles more of its inbox,
// and the sidecar is SIGKILLed and started again. Every restart must restore exactly the last
// confirmed checkpoint, report what was handled since and what is pending, leave the agent's
// durable consumer exactly as it was, and finish inside the 30-second SLA.
#include <signal.h>

#include <string>

#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

constexpr int kCycles = 20;

class KillRestartTest : public SidecarEnvTest {
 protected:
  // The next event whose subject ends in `suffix`, skipping others; null after `timeout_ms`.
  json NextEventEndingIn(const std::string& suffix, int timeout_ms = 10000) {
    for (int i = 0; i < 50; ++i) {
      json e = NextEvent(timeout_ms);
      if (!e.is_object()) return nullptr;
      std::string subject = e["subject"];
      if (subject.size() >= suffix.size() &&
          subject.compare(subject.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return e;
      }
    }
    return nullptr;
  }
};

TEST_F(KillRestartTest, EveryRestartRestoresTheLastConfirmedCheckpoint) {
  const std::string inbox = std::string("inbox.") + kProcAgent + ".task";
  std::string confirmed_id;
  int64_t confirmed_seq = 0;
  uint64_t floor_at_checkpoint = 0;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    auto before = js_->SnapshotConsumer("INBOX", "agent");
    ASSERT_TRUE(before.ok()) << before.status().ToString();
    auto sidecar = StartSidecar({{"CKPT_RESTORE_ON_START", "true"}});
    if (cycle > 0) {
      json restored = NextEventEndingIn(".checkpoint.restored");
      ASSERT_TRUE(restored.is_object()) << sidecar->Stdout() << sidecar->Stderr();
      const json& d = restored["data"];
      EXPECT_EQ(d["checkpointId"], confirmed_id);
      EXPECT_EQ(d["sequenceNumber"], confirmed_seq);
      EXPECT_EQ(d["handled"], before->ack_floor_stream_seq - floor_at_checkpoint);
      EXPECT_EQ(d["pending"], before->num_pending);
      EXPECT_EQ(d["skippedCorrupt"], 0);
      EXPECT_LT(d["totalMs"].get<double>(), 30000.0);
      auto after = js_->SnapshotConsumer("INBOX", "agent");
      ASSERT_TRUE(after.ok());
      EXPECT_EQ(*after, *before) << "restore changed the agent's durable consumer";
      HttpReply restoration = HttpCall(port_, "GET", "/v1/restoration");
      ASSERT_EQ(restoration.status, 200);
      std::string prompt = json::parse(restoration.body)["prompt"];
      EXPECT_NE(prompt.find("cycle " + std::to_string(cycle - 1) + " draft"), std::string::npos)
          << "the prompt does not carry the last confirmed draft";
    }
    // The agent's step: new context, a confirmed checkpoint, then more inbox work.
    ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json"))
                  .status,
              200);
    json patch = {{"contextSummary", {{"draftContent", "cycle " + std::to_string(cycle) +
                                                           " draft"}}}};
    ASSERT_EQ(HttpCall(port_, "PATCH", "/v1/context", patch.dump(), "application/json").status,
              200);
    HttpReply created = HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"manual"})",
                                 "application/json");
    ASSERT_EQ(created.status, 201) << created.body;
    json c = json::parse(created.body);
    EXPECT_GT(c["sequenceNumber"].get<int64_t>(), confirmed_seq);
    confirmed_id = c["checkpointId"];
    confirmed_seq = c["sequenceNumber"];
    auto at_checkpoint = js_->SnapshotConsumer("INBOX", "agent");
    ASSERT_TRUE(at_checkpoint.ok());
    floor_at_checkpoint = at_checkpoint->ack_floor_stream_seq;
    auto seqs = js_->PublishN(inbox, 3, "job ");
    ASSERT_TRUE(seqs.ok());
    ASSERT_TRUE(js_->FetchAndAckThrough("INBOX", "agent", (*seqs)[1]).ok());
    sidecar->Kill();
  }
  // Nothing confirmed was lost: every confirmed sequence is in the store and verifies.
  auto store = OpenTestStore();
  auto latest = store->GetLatestVerified(kProcAgent);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->checkpoint.checkpoint_id, confirmed_id);
  EXPECT_TRUE(latest->skipped.empty());
}

}  // namespace
}  // namespace agentckpt::testing
