// JetStreamReplaySource against a real nats-server: the replay reads what came after the
// checkpoint and leaves the stream and the agent's durable consumer exactly as they were.
#include "replay/jetstream_replay.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/utf8.h"
#include "nats/nats_connect.h"
#include "nats/nats_handles.h"
#include "tests/support/jetstream_fixture.h"
#include "tests/support/nats_server.h"

namespace agentckpt {
namespace {

// A plain connection to `url` (nats/nats_connect.h), owned by the caller; null on failure.
natsConnection* ConnectTo(const std::string& url) {
  auto connected = ConnectNatsUrl(url);
  EXPECT_TRUE(connected.ok()) << connected.status().ToString();
  return connected.ok() ? connected->release() : nullptr;
}

using testing::ConsumerSnapshot;
using testing::JetStreamTestClient;
using testing::NatsServerProcess;
using testing::StreamSnapshot;

constexpr auto kDeadline = std::chrono::seconds(10);

class JetStreamReplayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new NatsServerProcess(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    static std::atomic<int> counter{0};
    int n = ++counter;
    stream_ = "REPLAY" + std::to_string(n);
    prefix_ = "agent" + std::to_string(n);
    inbox_ = prefix_ + ".inbox";
    auto client = JetStreamTestClient::Connect(server_->url());
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
  }

  // A stream over "<prefix>.inbox.>" and "<prefix>.other.>" with a durable filtered on the inbox.
  void CreateInboxStream(const std::string& durable_filter) {
    ASSERT_TRUE(client_->CreateStream(stream_, {inbox_ + ".>", prefix_ + ".other.>"}).ok());
    Status st = client_->CreateDurablePullConsumer(stream_, kDurable, durable_filter);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  uint64_t Publish(const std::string& subject, const std::string& body) {
    auto seq = client_->Publish(subject, body);
    EXPECT_TRUE(seq.ok()) << seq.status().ToString();
    return seq.ok() ? *seq : 0;
  }

  void AckThrough(uint64_t seq) {
    auto acked = client_->FetchAndAckThrough(stream_, kDurable, seq);
    ASSERT_TRUE(acked.ok()) << acked.status().ToString();
  }

  NatsPosition Position(uint64_t last_acked) const {
    NatsPosition p;
    p.stream_name = stream_;
    p.consumer_name = kDurable;
    p.last_acked_sequence = last_acked;
    return p;
  }

  StatusOr<ReplayResult> Replay(uint64_t last_acked, size_t max_messages = 50,
                                size_t max_body_bytes = 2048) {
    JetStreamReplaySource source(client_->connection(), kDeadline);
    return source.ReadSince(Position(last_acked), max_messages, max_body_bytes);
  }

  StreamSnapshot StreamState() {
    auto s = client_->SnapshotStream(stream_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : StreamSnapshot{};
  }
  ConsumerSnapshot ConsumerState() {
    auto c = client_->SnapshotConsumer(stream_, kDurable);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : ConsumerSnapshot{};
  }

  static constexpr const char* kDurable = "agent-worker";
  static NatsServerProcess* server_;
  std::string stream_, prefix_, inbox_;
  std::unique_ptr<JetStreamTestClient> client_;
};

NatsServerProcess* JetStreamReplayTest::server_ = nullptr;

// Records every message that crosses the server while it is alive (a subscriber on ">").
// JetStream deliveries show up here too: the server delivers them to the reader's inbox under
// the stored message's own subject, with a "$JS.ACK.<stream>.<consumer>...." reply.
struct TappedMessage {
  std::string subject;
  std::string reply;
};

class WireTap {
 public:
  explicit WireTap(const std::string& url) {
    nc_ = ConnectTo(url);
    EXPECT_NE(nc_, nullptr);
    EXPECT_EQ(natsConnection_SubscribeSync(&sub_, nc_, ">"), NATS_OK);
    EXPECT_EQ(natsConnection_Flush(nc_), NATS_OK);
  }
  ~WireTap() {
    // Every message on the server reaches this subscription, up to its unsubscribe.
    nats_handles::UnsubscribeAndDestroy(nc_, sub_);
    if (nc_ != nullptr) {
      natsConnection_Close(nc_);
      natsConnection_Destroy(nc_);
    }
  }
  // Everything received so far; `other` is flushed first so its traffic has reached the server.
  std::vector<TappedMessage> Messages(natsConnection* other) {
    if (sub_ == nullptr) return {};  // the constructor's failure is reported already
    EXPECT_EQ(natsConnection_Flush(other), NATS_OK);
    EXPECT_EQ(natsConnection_Flush(nc_), NATS_OK);
    std::vector<TappedMessage> messages;
    natsMsg* msg = nullptr;
    while (natsSubscription_NextMsg(&msg, sub_, 50) == NATS_OK) {
      const char* reply = natsMsg_GetReply(msg);
      messages.push_back({natsMsg_GetSubject(msg), reply == nullptr ? "" : reply});
      natsMsg_Destroy(msg);
    }
    return messages;
  }

 private:
  natsConnection* nc_ = nullptr;
  natsSubscription* sub_ = nullptr;
};

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// EXPECTs the counts of a replay that shows 50 of `handled + pending` messages, the oldest and
// newest shown, and the split: the message at `last_handled` is the last one handled.
void ExpectNewest50(const ReplayResult& r, uint64_t handled, uint64_t pending,
                    const std::string& front, const std::string& back, size_t last_handled) {
  EXPECT_EQ(r.handled_count, handled);
  EXPECT_EQ(r.pending_count, pending);
  EXPECT_EQ(r.truncated, handled + pending - 50);
  ASSERT_EQ(r.messages.size(), 50u);
  EXPECT_EQ(r.messages.front().data, front);
  EXPECT_EQ(r.messages.back().data, back);
  EXPECT_TRUE(r.messages[last_handled].handled);
  EXPECT_FALSE(r.messages[last_handled + 1].handled);
}

TEST_F(JetStreamReplayTest, LeavesStreamAndDurableExactlyAsTheyWere) {
  CreateInboxStream(inbox_ + ".>");
  std::vector<uint64_t> inbox;
  for (int i = 1; i <= 12; ++i) {
    inbox.push_back(Publish(inbox_ + (i % 3 ? ".tasks" : ".alerts"), "task " + std::to_string(i)));
    if (i % 4 == 0) Publish(prefix_ + ".other.noise", "noise " + std::to_string(i));
  }
  AckThrough(inbox[3]);  // the checkpoint's position
  const uint64_t checkpoint_seq = inbox[3];
  AckThrough(inbox[6]);  // handled after the checkpoint
  ASSERT_TRUE(client_->FetchAndNak(stream_, kDurable, 1).ok());
  ASSERT_TRUE(client_->FetchWithoutAck(stream_, kDurable, 2).ok());  // redelivered + ack pending

  const StreamSnapshot stream_before = StreamState();
  const ConsumerSnapshot consumer_before = ConsumerState();
  ASSERT_EQ(consumer_before.ack_floor_stream_seq, inbox[6]);
  ASSERT_EQ(consumer_before.num_ack_pending, 2);
  ASSERT_EQ(consumer_before.num_redelivered, 1);

  WireTap tap(server_->url());
  auto result = Replay(checkpoint_seq);
  std::vector<TappedMessage> wire = tap.Messages(client_->connection());
  ASSERT_TRUE(result.ok()) << result.status().ToString();

  EXPECT_EQ(StreamState(), stream_before);
  EXPECT_EQ(ConsumerState(), consumer_before);

  // Only JetStream API requests, inbox replies, and deliveries from a consumer other than the
  // durable; no acks, no pull on the durable, no publish on an application subject.
  const std::string durable_next = "$JS.API.CONSUMER.MSG.NEXT." + stream_ + "." + kDurable;
  const std::string delivery_prefix = "$JS.ACK." + stream_ + ".";
  const std::string durable_delivery = delivery_prefix + kDurable + ".";
  size_t deliveries = 0;
  for (const TappedMessage& m : wire) {
    EXPECT_FALSE(StartsWith(m.subject, "$JS.ACK.")) << m.subject;
    EXPECT_NE(m.subject, durable_next);
    if (StartsWith(m.subject, "$JS.") || StartsWith(m.subject, "_INBOX.")) continue;
    EXPECT_TRUE(StartsWith(m.reply, delivery_prefix)) << m.subject << " reply " << m.reply;
    EXPECT_FALSE(StartsWith(m.reply, durable_delivery)) << m.reply;
    EXPECT_TRUE(StartsWith(m.subject, inbox_)) << m.subject;
    ++deliveries;
  }
  EXPECT_EQ(deliveries, 8u);  // exactly the replayed messages, each delivered once

  EXPECT_EQ(result->ack_floor_now, inbox[6]);
  EXPECT_EQ(result->handled_count, 3u);  // inbox 5..7
  EXPECT_EQ(result->pending_count, 5u);  // inbox 8..12
  EXPECT_EQ(result->truncated, 0u);
  ASSERT_EQ(result->messages.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const ReplayedMessage& m = result->messages[i];
    EXPECT_EQ(m.stream_sequence, inbox[4 + i]);
    EXPECT_EQ(m.data, "task " + std::to_string(5 + i));
    EXPECT_EQ(m.original_size, m.data.size());
    EXPECT_EQ(m.handled, i < 3);
    EXPECT_TRUE(StartsWith(m.subject, inbox_)) << m.subject;
    EXPECT_GT(m.timestamp_ms, 1600000000000);
  }
  EXPECT_EQ(result->pending_subjects,
            (std::vector<std::string>{inbox_ + ".alerts", inbox_ + ".tasks"}));
}

TEST_F(JetStreamReplayTest, SplitsHandledAndPendingAtTheLiveAckFloor) {
  CreateInboxStream(inbox_ + ".>");
  auto seqs = client_->PublishN(inbox_ + ".tasks", 10, "m");
  ASSERT_TRUE(seqs.ok());
  AckThrough((*seqs)[5]);  // live ack floor: message 6; the checkpoint saw only 3
  auto result = Replay((*seqs)[2]);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->handled_count, 3u);
  EXPECT_EQ(result->pending_count, 4u);
  ASSERT_EQ(result->messages.size(), 7u);
  EXPECT_TRUE(result->messages[2].handled);
  EXPECT_FALSE(result->messages[3].handled);
  EXPECT_EQ(result->messages[3].data, "m7");
  EXPECT_EQ(result->pending_subjects, std::vector<std::string>{inbox_ + ".tasks"});
}

TEST_F(JetStreamReplayTest, KeepsTheNewest50AndCountsTheRest) {
  CreateInboxStream(inbox_ + ".>");
  auto seqs = client_->PublishN(inbox_ + ".tasks", 130, "m");
  ASSERT_TRUE(seqs.ok());
  AckThrough((*seqs)[99]);
  const StreamSnapshot stream_before = StreamState();
  const ConsumerSnapshot consumer_before = ConsumerState();

  auto result = Replay(0);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ExpectNewest50(*result, 100, 30, "m81", "m130", 19);  // m100 handled, m101 not
  EXPECT_EQ(StreamState(), stream_before);
  EXPECT_EQ(ConsumerState(), consumer_before);
}

TEST_F(JetStreamReplayTest, ReadsOnlyTheDurablesFilterSubject) {
  CreateInboxStream(inbox_ + ".tasks");
  Publish(inbox_ + ".tasks", "t1");
  Publish(prefix_ + ".other.x", "o1");
  Publish(inbox_ + ".alerts", "a1");  // in the stream, not in the durable's filter
  Publish(inbox_ + ".tasks", "t2");
  auto result = Replay(0);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->messages.size(), 2u);
  EXPECT_EQ(result->messages[0].data, "t1");
  EXPECT_EQ(result->messages[1].data, "t2");
  EXPECT_EQ(result->pending_count, 2u);
}

TEST_F(JetStreamReplayTest, DurableWithoutFilterReadsTheWholeStream) {
  CreateInboxStream("");
  Publish(inbox_ + ".tasks", "t1");
  Publish(prefix_ + ".other.x", "o1");
  auto result = Replay(0);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->messages.size(), 2u);
  EXPECT_EQ(result->pending_subjects,
            (std::vector<std::string>{inbox_ + ".tasks", prefix_ + ".other.x"}));
}

// A stream shared with other agents: the newest message after the checkpoint is often not this
// agent's. Each fetch ends when the reader has no more (nats-server 2.9 held a no_wait fetch that
// also carried an expiry open until it expired), so a replay takes round trips, never the read
// deadline. The deadline here is 60 s; the bound checked is half of it, far above the
// milliseconds the replay needs, so the check does not depend on this machine's speed.
TEST_F(JetStreamReplayTest, AStreamSharedWithOtherAgentsIsReadWithoutWaitingOutTheDeadline) {
  CreateInboxStream(inbox_ + ".>");
  std::vector<uint64_t> own;
  for (int i = 1; i <= 6; ++i) {
    own.push_back(Publish(inbox_ + ".tasks", "task " + std::to_string(i)));
    Publish(prefix_ + ".other.agent2", "theirs " + std::to_string(i));  // the newest is theirs
  }
  AckThrough(own[3]);
  constexpr auto kLongDeadline = std::chrono::seconds(60);
  JetStreamReplaySource source(client_->connection(), kLongDeadline);

  const auto start = std::chrono::steady_clock::now();
  auto some_own = source.ReadSince(Position(own[1]), 50, 2048);     // own messages 3..6 after it
  auto only_theirs = source.ReadSince(Position(own[5]), 50, 2048);  // only theirs after it
  const auto elapsed = std::chrono::steady_clock::now() - start;

  ASSERT_TRUE(some_own.ok()) << some_own.status().ToString();
  EXPECT_FALSE(some_own->partial) << some_own->partial_reason;
  ASSERT_EQ(some_own->messages.size(), 4u);
  EXPECT_EQ(some_own->messages.front().data, "task 3");
  EXPECT_EQ(some_own->messages.back().data, "task 6");
  EXPECT_EQ(some_own->handled_count, 2u);
  EXPECT_EQ(some_own->pending_count, 2u);
  ASSERT_TRUE(only_theirs.ok()) << only_theirs.status().ToString();
  EXPECT_FALSE(only_theirs->partial) << only_theirs->partial_reason;
  EXPECT_TRUE(only_theirs->messages.empty());
  EXPECT_EQ(only_theirs->pending_count, 0u);
  EXPECT_LT(elapsed, kLongDeadline / 2);
}

TEST_F(JetStreamReplayTest, NothingAfterTheCheckpointIsAnEmptyReplay) {
  CreateInboxStream(inbox_ + ".>");
  auto seqs = client_->PublishN(inbox_ + ".tasks", 3, "m");
  ASSERT_TRUE(seqs.ok());
  AckThrough(seqs->back());
  const StreamSnapshot stream_before = StreamState();

  auto at_end = Replay(seqs->back());
  ASSERT_TRUE(at_end.ok()) << at_end.status().ToString();
  EXPECT_TRUE(at_end->messages.empty());
  EXPECT_EQ(at_end->handled_count + at_end->pending_count + at_end->truncated, 0u);
  EXPECT_EQ(at_end->ack_floor_now, seqs->back());

  // Later messages exist, but none on the durable's subjects.
  Publish(prefix_ + ".other.x", "o1");
  auto other_only = Replay(seqs->back());
  ASSERT_TRUE(other_only.ok()) << other_only.status().ToString();
  EXPECT_TRUE(other_only->messages.empty());
  EXPECT_EQ(other_only->pending_count, 0u);
  EXPECT_EQ(StreamState().consumers, stream_before.consumers);

  auto empty_stream_client = client_->CreateStream(stream_ + "E", {prefix_ + ".empty"});
  ASSERT_TRUE(empty_stream_client.ok());
  ASSERT_TRUE(client_->CreateDurablePullConsumer(stream_ + "E", kDurable, "").ok());
  JetStreamReplaySource source(client_->connection(), kDeadline);
  NatsPosition p = Position(0);
  p.stream_name = stream_ + "E";
  auto empty = source.ReadSince(p, 50, 100);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->messages.empty());
}

TEST_F(JetStreamReplayTest, MissingStreamOrConsumerIsNotFound) {
  CreateInboxStream(inbox_ + ".>");
  JetStreamReplaySource source(client_->connection(), kDeadline);
  NatsPosition no_stream = Position(0);
  no_stream.stream_name = "NO_SUCH_STREAM";
  EXPECT_EQ(source.ReadSince(no_stream, 50, 100).status().code(), StatusCode::kNotFound);
  NatsPosition no_consumer = Position(0);
  no_consumer.consumer_name = "no-such-consumer";
  EXPECT_EQ(source.ReadSince(no_consumer, 50, 100).status().code(), StatusCode::kNotFound);
  NatsPosition unnamed = Position(0);
  unnamed.consumer_name.clear();
  EXPECT_EQ(source.ReadSince(unnamed, 50, 100).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(JetStreamReplayTest, WorkQueueStreamIsFailedPreconditionAndUntouched) {
  // A work-queue stream allows one consumer per subject: the replay cannot read beside it.
  ASSERT_TRUE(client_->CreateStream(stream_, {inbox_ + ".>"}, js_WorkQueuePolicy).ok());
  ASSERT_TRUE(client_->CreateDurablePullConsumer(stream_, kDurable, inbox_ + ".>").ok());
  ASSERT_TRUE(client_->PublishN(inbox_ + ".tasks", 5, "m").ok());
  const StreamSnapshot stream_before = StreamState();
  const ConsumerSnapshot consumer_before = ConsumerState();
  auto result = Replay(0);
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition) << result.status().ToString();
  EXPECT_EQ(StreamState(), stream_before);
  EXPECT_EQ(ConsumerState(), consumer_before);
}

TEST_F(JetStreamReplayTest, CutsBodiesOnACharacterBoundary) {
  CreateInboxStream(inbox_ + ".>");
  std::string body;
  while (body.size() < 300) body += "a€😀";  // 1 + 3 + 4 bytes
  Publish(inbox_ + ".tasks", body);
  Publish(inbox_ + ".tasks", std::string("bad\xFF\xFE bytes"));
  auto result = Replay(0, 50, 101);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->messages.size(), 2u);
  const ReplayedMessage& m = result->messages[0];
  EXPECT_EQ(m.original_size, body.size());
  EXPECT_LE(m.data.size(), 101u);
  EXPECT_GE(m.data.size(), 98u);  // at most one 4-byte character short
  EXPECT_TRUE(IsValidUtf8(m.data));
  EXPECT_EQ(body.compare(0, m.data.size(), m.data), 0);
  EXPECT_TRUE(IsValidUtf8(result->messages[1].data));
  EXPECT_EQ(result->messages[1].original_size, 11u);
}

TEST_F(JetStreamReplayTest, LongLagKeepsMemoryBoundedAndCountsEverything) {
  CreateInboxStream(inbox_ + ".>");
  const int kCount = 3000;
  auto seqs = client_->PublishN(inbox_ + ".tasks", kCount, "m");
  ASSERT_TRUE(seqs.ok());
  auto result = Replay(0, 50, 16);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->pending_count, static_cast<uint64_t>(kCount));
  EXPECT_EQ(result->truncated, static_cast<uint64_t>(kCount - 50));
  ASSERT_EQ(result->messages.size(), 50u);
  EXPECT_EQ(result->messages.back().data, "m" + std::to_string(kCount));
  EXPECT_LE(result->messages_read, 200u);  // the reader started near the end
  EXPECT_EQ(StreamState().consumers, 1);
}

TEST_F(JetStreamReplayTest, ConcurrentReadsAgree) {
  CreateInboxStream(inbox_ + ".>");
  ASSERT_TRUE(client_->PublishN(inbox_ + ".tasks", 80, "m").ok());
  JetStreamReplaySource source(client_->connection(), kDeadline);
  std::vector<StatusOr<ReplayResult>> results(4, StatusOr<ReplayResult>(InternalError("unset")));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = source.ReadSince(Position(10), 50, 100); });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->pending_count, 70u);
    EXPECT_EQ(r->truncated, 20u);
    EXPECT_EQ(r->messages.front().data, "m31");
  }
  EXPECT_EQ(StreamState().consumers, 1);
}

// A monotonic clock that moves one second forward each time it is read.
class TickingEnv final : public Env {
 public:
  int64_t NowUnixMillis() override { return Env::Default()->NowUnixMillis(); }
  int64_t NowMonotonicMicros() override { return micros_ += 1'000'000; }
  void SleepForMicros(int64_t micros) override { micros_ += micros; }
  Status RandomBytes(uint8_t* out, size_t n) override {
    return Env::Default()->RandomBytes(out, n);
  }
  StatusOr<std::string> ReadFile(const std::string& path) override {
    return Env::Default()->ReadFile(path);
  }
  Status WriteFileAtomic(const std::string& path, std::string_view data) override {
    return Env::Default()->WriteFileAtomic(path, data);
  }
  bool FileExists(const std::string& path) override { return Env::Default()->FileExists(path); }

 private:
  std::atomic<int64_t> micros_{0};
};

// The deadline (CKPT_REPLAY_TIMEOUT_MS) on a clock that moves one second per reading: tried at
// every budget from 1 s up, a replay either fails before it knows the counts, or returns what it
// read with complete counts (partial), or completes. Partial results occur, and in every outcome
// the replay consumers are gone.
TEST_F(JetStreamReplayTest, PastTheReadDeadlineKeepsWhatWasReadWithHonestCounts) {
  CreateInboxStream(inbox_ + ".>");
  const int kCount = 3000;
  auto seqs = client_->PublishN(inbox_ + ".tasks", kCount, "m");
  ASSERT_TRUE(seqs.ok());
  AckThrough((*seqs)[999]);
  const StreamSnapshot stream_before = StreamState();
  int failed = 0, partial = 0, complete = 0;
  for (int budget_s = 1; budget_s <= 80 && complete == 0; ++budget_s) {
    TickingEnv env;
    JetStreamReplaySource source(client_->connection(), std::chrono::seconds(budget_s), &env);
    auto result = source.ReadSince(Position(0), 1000, 16);
    EXPECT_EQ(StreamState(), stream_before) << budget_s;  // the replay consumers are gone
    if (!result.ok()) {
      EXPECT_EQ(result.status().code(), StatusCode::kDeadlineExceeded)
          << result.status().ToString();
      EXPECT_EQ(partial + complete, 0) << "a longer budget failed after a shorter one worked";
      ++failed;
      continue;
    }
    EXPECT_EQ(result->handled_count, 1000u);
    EXPECT_EQ(result->pending_count, 2000u);
    EXPECT_EQ(result->truncated, kCount - result->messages.size());
    if (result->partial) {
      ++partial;
      EXPECT_LT(result->messages_read, static_cast<uint64_t>(kCount));  // not all were read
      EXPECT_LE(result->messages.size(), 1000u);
      EXPECT_NE(result->partial_reason.find("deadline"), std::string::npos)
          << result->partial_reason;
      for (size_t i = 1; i < result->messages.size(); ++i) {
        EXPECT_LT(result->messages[i - 1].stream_sequence, result->messages[i].stream_sequence);
      }
    } else {
      ++complete;
      ASSERT_EQ(result->messages.size(), 1000u);
      EXPECT_EQ(result->messages.back().data, "m" + std::to_string(kCount));
    }
  }
  EXPECT_GT(failed, 0);
  EXPECT_GT(partial, 0);
  EXPECT_EQ(complete, 1);
}

// How many replay readers a replay created: the consumer creations on the wire.
size_t ReaderCreations(const std::vector<TappedMessage>& wire) {
  size_t n = 0;
  for (const TappedMessage& m : wire) {
    if (StartsWith(m.subject, "$JS.API.CONSUMER.CREATE.")) ++n;
  }
  return n;
}

// A long backlog whose ack floor is among the newest messages (an agent that keeps up): the
// tail is read from a start before the floor, so it counts the pending messages itself and only
// two readers are created, as for a short backlog. With the floor further back, a third reader
// at the floor counts them. Either way the counts are the published truth.
TEST_F(JetStreamReplayTest, AnAgentThatKeepsUpIsCountedFromTheTailRead) {
  CreateInboxStream(inbox_ + ".>");
  auto seqs = client_->PublishN(inbox_ + ".tasks", 1000, "m");
  ASSERT_TRUE(seqs.ok());
  AckThrough((*seqs)[979]);
  const StreamSnapshot stream_before = StreamState();
  {
    WireTap tap(server_->url());
    auto result = Replay(0);
    std::vector<TappedMessage> wire = tap.Messages(client_->connection());
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(ReaderCreations(wire), 2u);
    ExpectNewest50(*result, 980, 20, "m951", "m1000", 29);  // m980 handled, m981 not
    EXPECT_LE(result->messages_read, 200u);
    EXPECT_FALSE(result->partial);
  }
  // The checkpoint at message 400: the same count of pending, fewer handled since.
  {
    auto result = Replay((*seqs)[399]);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->handled_count, 580u);
    EXPECT_EQ(result->pending_count, 20u);
  }
  EXPECT_EQ(StreamState(), stream_before);
}

TEST_F(JetStreamReplayTest, AnAckFloorBeforeTheTailIsCountedByAReaderAtTheFloor) {
  CreateInboxStream(inbox_ + ".>");
  auto seqs = client_->PublishN(inbox_ + ".tasks", 1000, "m");
  ASSERT_TRUE(seqs.ok());
  AckThrough((*seqs)[499]);
  WireTap tap(server_->url());
  auto result = Replay(0);
  std::vector<TappedMessage> wire = tap.Messages(client_->connection());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(ReaderCreations(wire), 3u);
  EXPECT_EQ(result->handled_count, 500u);
  EXPECT_EQ(result->pending_count, 500u);
  ASSERT_EQ(result->messages.size(), 50u);
  EXPECT_EQ(result->messages.front().data, "m951");
  EXPECT_FALSE(result->messages.front().handled);
}

// A sparse tail (one of the agent's messages in four) with the floor inside it: the first
// guess holds too few, the tail is read from a reader further back, which still starts before
// the floor; the counts are exact.
TEST_F(JetStreamReplayTest, ASparseTailWithTheFloorInsideItIsCountedExactly) {
  CreateInboxStream(inbox_ + ".>");
  ASSERT_TRUE(client_->PublishN(inbox_ + ".tasks", 600, "a").ok());
  std::vector<uint64_t> b;
  for (int i = 1; i <= 60; ++i) {
    b.push_back(Publish(inbox_ + ".tasks", "b" + std::to_string(i)));
    for (int k = 0; k < 3; ++k) Publish(prefix_ + ".other.x", "o");
  }
  AckThrough(b[49]);  // 650 of the agent's messages handled, 10 pending
  const StreamSnapshot stream_before = StreamState();
  auto result = Replay(0);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ExpectNewest50(*result, 650, 10, "b11", "b60", 39);  // b50 handled, b51 not
  EXPECT_LE(result->messages_read, 400u);
  EXPECT_EQ(StreamState(), stream_before);
}

// Past the deadline with the floor inside the tail: a read cut before the floor cannot split
// the messages it did not read, and says its pending count is an upper bound; cut after the
// floor, the counts are exact.
TEST_F(JetStreamReplayTest, PastTheReadDeadlineBeforeTheFloorGivesPendingAsAnUpperBound) {
  CreateInboxStream(inbox_ + ".>");
  const int kCount = 3000;
  auto seqs = client_->PublishN(inbox_ + ".tasks", kCount, "m");
  ASSERT_TRUE(seqs.ok());
  // With 500 messages shown, 3,000 is a long backlog (over 4 x 500): the tail guess holds the
  // newest 1,000 (from message 2001) and the floor, 2500, is inside it.
  AckThrough((*seqs)[2499]);
  int bounded = 0, exact_partial = 0, complete = 0;
  for (int budget_s = 1; budget_s <= 80 && complete == 0; ++budget_s) {
    TickingEnv env;
    JetStreamReplaySource source(client_->connection(), std::chrono::seconds(budget_s), &env);
    auto result = source.ReadSince(Position(0), 500, 16);
    if (!result.ok()) {
      EXPECT_EQ(result.status().code(), StatusCode::kDeadlineExceeded);
      continue;
    }
    EXPECT_EQ(result->handled_count + result->pending_count, static_cast<uint64_t>(kCount));
    const bool past_floor =
        !result->messages.empty() && result->messages.back().stream_sequence >= (*seqs)[2499];
    if (!result->partial) {
      ++complete;
      EXPECT_EQ(result->pending_count, 500u);
    } else if (past_floor) {
      ++exact_partial;
      EXPECT_EQ(result->pending_count, 500u) << result->partial_reason;
      EXPECT_EQ(result->partial_reason.find("upper bound"), std::string::npos);
    } else {
      ++bounded;
      EXPECT_GE(result->pending_count, 500u);
      EXPECT_NE(result->partial_reason.find("upper bound"), std::string::npos)
          << result->partial_reason;
    }
  }
  EXPECT_GT(bounded, 0);
  EXPECT_EQ(complete, 1);
}

// Messages after the checkpoint that the stream no longer holds (here purged) are counted.
TEST_F(JetStreamReplayTest, MessagesGoneFromTheStreamAreCountedAsLost) {
  CreateInboxStream(inbox_ + ".>");
  auto seqs = client_->PublishN(inbox_ + ".tasks", 10, "m");
  ASSERT_TRUE(seqs.ok());
  jsOptions opts;
  jsOptions_Init(&opts);
  opts.Stream.Purge.Sequence = (*seqs)[6];  // removes everything below message 7
  jsErrCode jerr = static_cast<jsErrCode>(0);
  ASSERT_EQ(js_PurgeStream(client_->js(), stream_.c_str(), &opts, &jerr), NATS_OK) << jerr;
  auto result = Replay((*seqs)[1]);  // the checkpoint had handled 2
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->lost, 4u);  // messages 3 to 6
  ASSERT_EQ(result->messages.size(), 4u);
  EXPECT_EQ(result->messages.front().data, "m7");
  EXPECT_EQ(result->pending_count, 4u);
  // All of them gone: still said.
  opts.Stream.Purge.Sequence = 0;
  ASSERT_EQ(js_PurgeStream(client_->js(), stream_.c_str(), &opts, &jerr), NATS_OK) << jerr;
  auto all_gone = Replay((*seqs)[1]);
  ASSERT_TRUE(all_gone.ok()) << all_gone.status().ToString();
  EXPECT_EQ(all_gone->lost, 8u);
  EXPECT_TRUE(all_gone->messages.empty());
}

// A backlog of uneven density on the durable's filter: the counts are exact, the newest 50 are
// replayed, and only a bounded number of messages is read.
TEST_F(JetStreamReplayTest, LongFilteredBacklogIsReadNearItsEnd) {
  CreateInboxStream(inbox_ + ".>");
  ASSERT_TRUE(client_->PublishN(inbox_ + ".tasks", 700, "a").ok());
  ASSERT_TRUE(client_->PublishN(prefix_ + ".other.x", 1500, "o").ok());
  auto floor = client_->PublishN(inbox_ + ".tasks", 400, "b");
  ASSERT_TRUE(floor.ok());
  ASSERT_TRUE(client_->PublishN(prefix_ + ".other.x", 900, "p").ok());
  ASSERT_TRUE(client_->PublishN(inbox_ + ".tasks", 30, "c").ok());
  AckThrough(floor->back());  // 1100 of the durable's messages handled
  const StreamSnapshot stream_before = StreamState();
  auto result = Replay(0);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ExpectNewest50(*result, 1100, 30, "b381", "c30", 19);
  EXPECT_LE(result->messages_read, 200u);
  EXPECT_EQ(StreamState(), stream_before);
}

// A consumer with several filter subjects (nats-server 2.10's filter_subjects, which nats.c 3.4
// does not know) is refused clearly, never replayed unfiltered. nats-server 2.9 cannot make one,
// so a server without JetStream and a responder answering the consumer info stand in.
TEST_F(JetStreamReplayTest, SeveralFilterSubjectsAreRefusedNotReplayedUnfiltered) {
  NatsServerProcess plain("-js=false");
  natsConnection* nc = ConnectTo(plain.url());
  ASSERT_NE(nc, nullptr);
  natsSubscription* sub = nullptr;
  auto respond = [](natsConnection* c, natsSubscription*, natsMsg* msg, void*) {
    const char* info = R"({"type":"io.nats.jetstream.api.v1.consumer_info_response",)"
                       R"("stream_name":"S","name":"agent","config":{"durable_name":"agent",)"
                       R"("filter_subjects":["in.a.>","in.b.>"]},"delivered":{"stream_seq":9},)"
                       R"("ack_floor":{"stream_seq":4},"num_pending":5})";
    natsConnection_PublishString(c, natsMsg_GetReply(msg), info);
    natsMsg_Destroy(msg);
  };
  ASSERT_EQ(natsConnection_Subscribe(&sub, nc, "$JS.API.CONSUMER.INFO.S.agent", respond, nullptr),
            NATS_OK);
  ASSERT_EQ(natsConnection_FlushTimeout(nc, 2000), NATS_OK);
  JetStreamReplaySource source(nc, kDeadline);
  NatsPosition p;
  p.stream_name = "S";
  p.consumer_name = "agent";
  p.last_acked_sequence = 2;
  auto result = source.ReadSince(p, 50, 100);
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition) << result.status().ToString();
  EXPECT_NE(result.status().message().find("2 filter subjects (in.a.>, in.b.>)"), std::string::npos)
      << result.status().ToString();
  agentckpt::nats_handles::UnsubscribeAndDestroy(nc, sub);
  natsConnection_Close(nc);
  natsConnection_Destroy(nc);
}

TEST_F(JetStreamReplayTest, NoConnectionIsUnavailable) {
  JetStreamReplaySource no_connection(nullptr, kDeadline);
  EXPECT_EQ(no_connection.ReadSince(Position(0), 50, 100).status().code(),
            StatusCode::kUnavailable);

  natsConnection* nc = ConnectTo(server_->url());
  ASSERT_NE(nc, nullptr);
  natsConnection_Close(nc);
  JetStreamReplaySource closed(nc, kDeadline);
  EXPECT_EQ(closed.ReadSince(Position(0), 50, 100).status().code(), StatusCode::kUnavailable);
  natsConnection_Destroy(nc);
}

TEST(JetStreamReplayOutageTest, ServerGoneIsUnavailable) {
  NatsServerProcess server;
  auto opts = NewNatsOptions(server.url(), NatsAuthOptions{});
  ASSERT_TRUE(opts.ok()) << opts.status().ToString();
  natsOptions_SetMaxReconnect(opts->get(), -1);
  auto connected = ConnectWithOptions(opts->get(), server.url(), NatsAuthOptions{});
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  natsConnection* nc = connected->release();
  server.Kill();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (natsConnection_Status(nc) == NATS_CONN_STATUS_CONNECTED &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  JetStreamReplaySource source(nc, std::chrono::seconds(2));
  NatsPosition p;
  p.stream_name = "S";
  p.consumer_name = "c";
  EXPECT_EQ(source.ReadSince(p, 50, 100).status().code(), StatusCode::kUnavailable);
  natsConnection_Close(nc);
  natsConnection_Destroy(nc);
}

}  // namespace
}  // namespace agentckpt
