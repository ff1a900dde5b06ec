// JetStream helpers for tests that need a real stream and a real durable consumer: connect,
// create a stream and a durable pull consumer with a filter subject, publish, fetch and ack up
// to a stream sequence (as the agent would), and snapshot stream and consumer state so a test
// can prove that something left them exactly as they were.
//
// Every method returns a Status instead of asserting, so tests can ASSERT_TRUE(x.ok()) with the
// message. Not thread-safe: one JetStreamTestClient per test thread.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"

namespace agentckpt::testing {

// The parts of a stream's state that a read-only operation must not change.
struct StreamSnapshot {
  uint64_t msgs = 0;
  uint64_t bytes = 0;
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  int64_t consumers = 0;
  bool operator==(const StreamSnapshot&) const = default;
};

// The parts of a durable consumer's state that a read-only operation must not change.
struct ConsumerSnapshot {
  uint64_t delivered_consumer_seq = 0;
  uint64_t delivered_stream_seq = 0;
  uint64_t ack_floor_consumer_seq = 0;
  uint64_t ack_floor_stream_seq = 0;
  int64_t num_ack_pending = 0;
  int64_t num_redelivered = 0;
  int64_t num_waiting = 0;
  uint64_t num_pending = 0;
  bool operator==(const ConsumerSnapshot&) const = default;
};

std::ostream& operator<<(std::ostream& os, const StreamSnapshot& s);
std::ostream& operator<<(std::ostream& os, const ConsumerSnapshot& c);

class JetStreamTestClient {
 public:
  // Connects to `url` (e.g. NatsServerProcess::url()). kUnavailable if it cannot.
  static StatusOr<std::unique_ptr<JetStreamTestClient>> Connect(const std::string& url);
  ~JetStreamTestClient();
  JetStreamTestClient(const JetStreamTestClient&) = delete;
  JetStreamTestClient& operator=(const JetStreamTestClient&) = delete;

  // The connection and JetStream context, owned by this client.
  natsConnection* connection() const { return connection_; }
  jsCtx* js() const { return js_; }

  // Creates a file-backed stream `name` capturing `subjects` (limits retention by default).
  Status CreateStream(const std::string& name, const std::vector<std::string>& subjects,
                      jsRetentionPolicy retention = js_LimitsPolicy);
  // Creates a durable pull consumer (ack explicit, deliver all) on `stream`; an empty
  // `filter_subject` means the whole stream.
  Status CreateDurablePullConsumer(const std::string& stream, const std::string& durable,
                                   const std::string& filter_subject);

  // Publishes one message and returns its stream sequence.
  StatusOr<uint64_t> Publish(const std::string& subject, const std::string& body);
  // Publishes `count` messages "<body_prefix><i>" (i from 1) and returns their sequences.
  StatusOr<std::vector<uint64_t>> PublishN(const std::string& subject, int count,
                                           const std::string& body_prefix);

  // As the agent would: fetches from the durable one message at a time and acks each, until it
  // has acked the message with stream sequence `stream_seq` (or the consumer has no more).
  // Returns how many messages were acked.
  StatusOr<int> FetchAndAckThrough(const std::string& stream, const std::string& durable,
                                   uint64_t stream_seq);
  // Fetches `count` messages from the durable without acking them (they become ack pending).
  StatusOr<int> FetchWithoutAck(const std::string& stream, const std::string& durable, int count);
  // Fetches `count` messages and naks each, so the server redelivers them on the next fetch
  // (num_redelivered grows once they are fetched again).
  StatusOr<int> FetchAndNak(const std::string& stream, const std::string& durable, int count);

  StatusOr<StreamSnapshot> SnapshotStream(const std::string& stream);
  StatusOr<ConsumerSnapshot> SnapshotConsumer(const std::string& stream,
                                              const std::string& durable);

 private:
  JetStreamTestClient(natsConnection* connection, jsCtx* js) : connection_(connection), js_(js) {}
  enum class Reply { kAck, kNak, kNone };
  // Fetches one message at a time; stops after `count` messages (0: no count limit) or after
  // the message with stream sequence `through_seq` (0: no limit), or when none is left.
  StatusOr<int> Fetch(const std::string& stream, const std::string& durable, int count,
                      uint64_t through_seq, Reply reply);
  natsConnection* connection_;
  jsCtx* js_;
};

}  // namespace agentckpt::testing
