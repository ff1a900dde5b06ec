// Stream and consumer info read as the server's own JSON ($JS.API.STREAM.INFO and
// $JS.API.CONSUMER.INFO requests), not through nats.c's typed structs: nats.c 3.4.1 does not know
// `filter_subjects` (nats-server 2.10's several filter subjects per consumer), so its typed view
// of such a consumer looks unfiltered. Read only: nothing here changes a stream or a consumer.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace agentckpt {

struct DurableInfo {
  // Its filter subject(s): empty for the whole stream; more than one with `filter_subjects`.
  std::vector<std::string> filter_subjects;
  uint64_t ack_floor = 0;         // ack_floor.stream_seq
  uint64_t delivered_stream = 0;  // delivered.stream_seq
  uint64_t num_pending = 0;       // matching messages not yet delivered
};

struct StreamState {
  uint64_t first_seq = 0;  // the oldest sequence the stream still holds (last_seq + 1 if empty)
  uint64_t last_seq = 0;
};

// Consumer info of `consumer` on `stream`, waiting at most `wait_ms`. kNotFound (stream or
// consumer missing), kDeadlineExceeded (no answer in time), kUnavailable (no connection, no
// JetStream responder), kInternal (a reply that does not parse). Thread-safe.
StatusOr<DurableInfo> ReadDurableInfo(natsConnection* connection, const std::string& stream,
                                      const std::string& consumer, int64_t wait_ms);

// The stream's first and last sequence. Errors as ReadDurableInfo. Thread-safe.
StatusOr<StreamState> ReadStreamState(natsConnection* connection, const std::string& stream,
                                      int64_t wait_ms);

}  // namespace agentckpt
