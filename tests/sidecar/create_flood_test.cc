// A flood of agent.X.checkpoint.create requests against the real `agentckpt run` binary:
// requests coalesce into few checkpoints, the rest are rate-limited at once, every request is
// answered, and the sidecar stays responsive.
#include <nats/nats.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "nats/nats_connect.h"
#include "nats/nats_handles.h"
#include "nats/subjects.h"
#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

class CreateFloodTest : public SidecarEnvTest {};

struct Replies {
  std::atomic<int> total{0}, created{0}, rate_limited{0}, other{0};
  std::atomic<int> max_coalesced{0};
};

void OnReply(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* r = static_cast<Replies*>(closure);
  json body =
      json::parse(std::string(natsMsg_GetData(msg), natsMsg_GetDataLength(msg)), nullptr, false);
  if (body.is_object() && body.contains("checkpointId")) {
    r->created++;
    int c = body.value("coalescedRequests", 0);
    int prev = r->max_coalesced.load();
    while (c > prev && !r->max_coalesced.compare_exchange_weak(prev, c)) {
    }
  } else if (body.is_object() && body.contains("error") &&
             body["error"].value("code", "") == "RATE_LIMITED") {
    r->rate_limited++;
  } else {
    r->other++;
  }
  r->total++;
  natsMsg_Destroy(msg);
}

TEST_F(CreateFloodTest, ThousandRequestsCoalesceAndAreAllAnswered) {
  auto sidecar = StartSidecar({{"CKPT_CREATE_RATE_PER_S", "10"}, {"CKPT_CREATE_BURST", "20"}});
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
            200);
  size_t before = ListCheckpoints().size();

  auto connected = ConnectNatsUrl(nats_->url());
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  natsConnection* nc = connected->release();
  Replies replies;
  natsSubscription* sub = nullptr;
  ASSERT_EQ(natsConnection_Subscribe(&sub, nc, "flood.reply", OnReply, &replies), NATS_OK);
  ASSERT_EQ(natsSubscription_SetPendingLimits(sub, -1, -1), NATS_OK);
  ASSERT_EQ(natsConnection_Flush(nc), NATS_OK);

  constexpr int kRequests = 1000;
  const std::string subject = subjects::CheckpointCreate(kProcAgent);
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_EQ(natsConnection_PublishRequestString(nc, subject.c_str(), "flood.reply",
                                                  R"({"trigger":"manual"})"),
              NATS_OK);
  }
  ASSERT_EQ(natsConnection_Flush(nc), NATS_OK);

  // Responsive while the flood is served.
  auto health = HttpCall(port_, "GET", "/healthz");
  EXPECT_EQ(health.status, 200);

  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (replies.total.load() < kRequests && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(replies.total.load(), kRequests);
  EXPECT_EQ(replies.other.load(), 0);
  EXPECT_EQ(replies.created.load() + replies.rate_limited.load(), kRequests);
  // At most burst + rate * elapsed admitted; far fewer checkpoints than admitted requests.
  EXPECT_GE(replies.created.load(), 1);
  EXPECT_LE(replies.created.load(), 20 + 10 * 30);
  EXPECT_GE(replies.rate_limited.load(), kRequests - (20 + 10 * 30));
  size_t written = ListCheckpoints().size() - before;
  EXPECT_GE(written, 1u);
  EXPECT_LT(written, static_cast<size_t>(replies.created.load()) + 1);
  // Admitted requests coalesce: one write answered several of them, so there are fewer writes
  // than admitted requests by at least that many. How many writes there are in all depends on
  // how fast the flood is served (tokens refill at 10/s meanwhile), so no fixed bound is set.
  EXPECT_GT(replies.max_coalesced.load(), 1);
  EXPECT_LE(written + static_cast<size_t>(replies.max_coalesced.load()) - 1,
            static_cast<size_t>(replies.created.load()))
      << "admitted requests should coalesce into fewer checkpoints";
  EXPECT_EQ(HttpCall(port_, "GET", "/healthz").status, 200);

  agentckpt::nats_handles::UnsubscribeAndDestroy(nc, sub);
  natsConnection_Destroy(nc);
  EXPECT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
}

}  // namespace
}  // namespace agentckpt::testing
