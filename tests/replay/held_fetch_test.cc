// The replay's read against a JetStream that holds a no_wait fetch open on a drained consumer, as
// nats-server 2.9 does when its pending count for a wildcard-filtered consumer is wrong (it
// answers "404 No Messages" only when that count is 0). The real server does so about 1 run in
// 10 under load (RestoreJetStreamTest under ASan); here a responder on a server without
// JetStream plays the server's side of the exchange so that the case is met every run. It
// delivers nothing (nats-server refuses a client's publish with a $JS.ACK reply, which a
// delivery needs): the stream holds only other subjects' messages after the checkpoint, and the
// reader's count says 2.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nats/nats_connect.h"
#include "nats/nats_handles.h"
#include "replay/jetstream_replay.h"
#include "tests/support/nats_server.h"

namespace agentckpt {
namespace {

using nlohmann::json;
using testing::NatsServerProcess;

constexpr const char* kStream = "S";
constexpr const char* kDurable = "agent";
constexpr const char* kFilter = "in.>";
constexpr uint64_t kLastSeq = 8;  // 4 to 8 are on other subjects

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// What $JS.API.STREAM.MSG.GET with next_by_subj answers.
enum class ProbeAnswer {
  kNoMessage,        // none on the filter from `seq` on (JetStream error 10037)
  kStoredAfterRead,  // the next is sequence 9, stored after the stream info was read
  kRefused,          // an API error, as for a user not allowed the request
};

// Plays JetStream's API for one stream: the durable's and the stream's info, replay consumer
// creation (with a wrong count of 2) and deletion, fetches (held open unanswered) and probes.
class ScriptedJetStream {
 public:
  explicit ScriptedJetStream(ProbeAnswer answer) : answer_(answer) {}

  void Handle(natsConnection* nc, natsMsg* msg) {
    const std::string subject = natsMsg_GetSubject(msg);
    const char* reply = natsMsg_GetReply(msg);
    const std::string to = reply == nullptr ? "" : reply;
    const char* data = natsMsg_GetData(msg);
    const std::string body(data == nullptr ? "" : data, natsMsg_GetDataLength(msg));
    std::lock_guard<std::mutex> lock(mu_);
    if (subject == std::string("$JS.API.CONSUMER.INFO.") + kStream + "." + kDurable) {
      Send(nc, to,
           json{{"config", {{"durable_name", kDurable}, {"filter_subject", kFilter}}},
                {"delivered", {{"stream_seq", 3}}},
                {"ack_floor", {{"stream_seq", 3}}},
                {"num_pending", 2}});
    } else if (subject == std::string("$JS.API.STREAM.INFO.") + kStream) {
      Send(nc, to, json{{"state", {{"first_seq", 1}, {"last_seq", kLastSeq}}}});
    } else if (StartsWith(subject, "$JS.API.CONSUMER.CREATE.")) {
      const json request = json::parse(body, nullptr, false);
      Send(nc, to, json{{"name", request["config"]["name"]}, {"num_pending", 2}});
    } else if (StartsWith(subject, "$JS.API.CONSUMER.MSG.NEXT.")) {
      ++fetches_;  // held: no answer at all
    } else if (StartsWith(subject, "$JS.API.STREAM.MSG.GET.")) {
      probes_.push_back(json::parse(body, nullptr, false));
      Probe(nc, to);
    } else if (StartsWith(subject, "$JS.API.CONSUMER.DELETE.")) {
      Send(nc, to, json{{"success", true}});
    }
  }

  int fetches() {
    std::lock_guard<std::mutex> lock(mu_);
    return fetches_;
  }
  std::vector<json> probes() {
    std::lock_guard<std::mutex> lock(mu_);
    return probes_;
  }

 private:
  static void Send(natsConnection* nc, const std::string& to, const json& j) {
    const std::string text = j.dump();
    natsConnection_Publish(nc, to.c_str(), text.data(), static_cast<int>(text.size()));
  }

  void Probe(natsConnection* nc, const std::string& to) {
    switch (answer_) {
      case ProbeAnswer::kNoMessage:
        Send(nc, to,
             json{{"error", {{"code", 404}, {"err_code", 10037}, {"description", "none"}}}});
        return;
      case ProbeAnswer::kStoredAfterRead:
        Send(nc, to, json{{"message", {{"subject", "in.a"}, {"seq", kLastSeq + 1}}}});
        return;
      case ProbeAnswer::kRefused:
        Send(nc, to, json{{"error", {{"code", 503}, {"err_code", 10000}, {"description", "no"}}}});
        return;
    }
  }

  const ProbeAnswer answer_;
  std::mutex mu_;
  int fetches_ = 0;
  std::vector<json> probes_;
};

void OnRequest(natsConnection* nc, natsSubscription*, natsMsg* msg, void* closure) {
  static_cast<ScriptedJetStream*>(closure)->Handle(nc, msg);
  natsMsg_Destroy(msg);
}

class HeldFetchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto connected = ConnectNatsUrl(server_.url());
    ASSERT_TRUE(connected.ok()) << connected.status().ToString();
    nc_ = connected->release();
  }
  void TearDown() override {
    if (sub_ != nullptr) nats_handles::UnsubscribeAndDestroy(nc_, sub_);
    natsConnection_Close(nc_);
    natsConnection_Destroy(nc_);
  }

  // Replays through a responder answering probes with `answer`; the responder outlives its
  // subscription (TearDown ends that first).
  StatusOr<ReplayResult> Replay(ProbeAnswer answer, std::chrono::milliseconds deadline) {
    js_ = std::make_unique<ScriptedJetStream>(answer);
    EXPECT_EQ(natsConnection_Subscribe(&sub_, nc_, "$JS.API.>", OnRequest, js_.get()), NATS_OK);
    EXPECT_EQ(natsConnection_FlushTimeout(nc_, 2000), NATS_OK);
    JetStreamReplaySource source(nc_, deadline);
    NatsPosition position;
    position.stream_name = kStream;
    position.consumer_name = kDurable;
    position.last_acked_sequence = 3;
    return source.ReadSince(position, 50, 100);
  }

  NatsServerProcess server_{"-js=false"};
  std::unique_ptr<ScriptedJetStream> js_;
  natsConnection* nc_ = nullptr;
  natsSubscription* sub_ = nullptr;
};

// The probe beside the fetch finds nothing on the filter from the checkpoint up to the stream's
// last sequence, so the read ends complete although the fetch is never answered.
TEST_F(HeldFetchTest, AProbeFindingNothingEndsTheReadOfADrainedReader) {
  auto result = Replay(ProbeAnswer::kNoMessage, std::chrono::seconds(10));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_FALSE(result->partial) << result->partial_reason;
  EXPECT_TRUE(result->messages.empty());
  EXPECT_EQ(result->handled_count, 0u);
  EXPECT_EQ(result->pending_count, 0u);
  EXPECT_EQ(js_->fetches(), 1);
  const std::vector<json> probes = js_->probes();
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_EQ(probes[0], (json{{"seq", 4}, {"next_by_subj", kFilter}}));
}

// A message on the filter stored after the replay read the stream's last sequence is not part of
// the replay: the probe naming it ends the read as well.
TEST_F(HeldFetchTest, AProbeFindingOnlyALaterMessageEndsTheReadToo) {
  auto result = Replay(ProbeAnswer::kStoredAfterRead, std::chrono::seconds(10));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_FALSE(result->partial) << result->partial_reason;
  EXPECT_TRUE(result->messages.empty());
  EXPECT_EQ(js_->fetches(), 1);
}

// A probe refused (a user not allowed $JS.API.STREAM.MSG.GET on the stream) leaves the end to the
// fetch: here the fetch is held, so the read comes back partial at its deadline, saying so.
TEST_F(HeldFetchTest, ARefusedProbeLeavesTheEndToTheFetch) {
  auto result = Replay(ProbeAnswer::kRefused, std::chrono::seconds(3));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->partial);
  EXPECT_NE(result->partial_reason.find("fetch: no answer in time"), std::string::npos)
      << result->partial_reason;
  EXPECT_EQ(js_->fetches(), 1);
}

}  // namespace
}  // namespace agentckpt
