// ReplaySource: reads, without side effects, what arrived on an agent's JetStream inbox after a
// checkpoint's position. Implementation: JetStreamReplaySource (replay/jetstream_replay.h).
//
// Dry run means: no ack, no publish, no change to the agent's durable consumer (its delivered
// and ack-floor sequences, num_pending and num_redelivered stay exactly as they were).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "common/status.h"

namespace agentckpt {

struct ReplayedMessage {
  uint64_t stream_sequence = 0;
  std::string subject;
  int64_t timestamp_ms = 0;  // when the server stored the message
  std::string data;          // the body, untrusted; may be cut to the per-message byte limit
  size_t original_size = 0;  // body size before any cut
  bool handled = false;      // at or below the consumer's current ack floor: already processed
};

struct ReplayResult {
  // The newest `max_messages` messages after the checkpoint's lastAckedSequence that match the
  // consumer's filter subject(s), oldest first.
  std::vector<ReplayedMessage> messages;
  uint64_t handled_count = 0;  // all matching messages after the checkpoint, up to the ack floor
  uint64_t pending_count = 0;  // all matching messages after the ack floor (will be delivered)
  uint64_t truncated = 0;      // matching messages left out because of max_messages
  uint64_t ack_floor_now = 0;  // the consumer's ack floor (stream sequence) when read
  std::vector<std::string> pending_subjects;  // distinct subjects of pending messages, sorted
  // Stream sequences after the checkpoint's lastAckedSequence that the stream no longer holds
  // (purged, or removed by its limits: max-age, max-msgs, max-bytes): those messages are gone
  // and cannot be replayed. They are of any subject: with a filter, up to this many were the
  // agent's. Not counted in handled/pending/truncated.
  uint64_t lost = 0;
  // Messages this replay fetched from the stream: about max_messages to 4 x max_messages,
  // however long the backlog (the reader starts near its end).
  uint64_t messages_read = 0;
  // The read deadline passed while the messages were read: `messages` holds those read by then
  // (the newest of them), while the counts above are complete (from stream and consumer info).
  bool partial = false;
  std::string partial_reason;
};

class ReplaySource {
 public:
  virtual ~ReplaySource() = default;
  // Reads the messages after `position.lastAckedSequence` on `position.streamName`, filtered like
  // the consumer `position.consumerName`. Thread-safe. kNotFound if the stream or consumer does
  // not exist; kUnavailable if NATS cannot be reached; kDeadlineExceeded if the deadline passed
  // before the counts were known (after that, a partial result: see ReplayResult::partial);
  // kFailedPrecondition if the consumer cannot be replayed as it is filtered (several filter
  // subjects) or the server refuses a reader beside it.
  virtual StatusOr<ReplayResult> ReadSince(const NatsPosition& position, size_t max_messages,
                                           size_t max_body_bytes) = 0;
};

}  // namespace agentckpt
