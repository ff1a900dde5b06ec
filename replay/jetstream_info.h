// Stream and consumer info read as the server's own JSON ($JS.API.STREAM.INFO and
// $JS.API.CONSUMER.INFO requests), not through nats.c's typed structs: nats.c 3.4.1 does not know
// `filter_subjects` (nats-server 2.10's several filter subjects per consumer), so its typed view
// of such a consumer looks unfiltered. Read only: nothing here changes a stream or a consumer.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <nlohmann/json.hpp>
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

// The JSON of a JetStream API reply (`what` names the request in messages). kNotFound (stream or
// consumer missing), kDeadlineExceeded (null `reply`), kUnavailable (no responder, JetStream
// disabled, or an error of class 503: no leader or quorum now), kFailedPrecondition (any other
// API error; `api_error`, when given, receives its err_code), kInternal (a reply that does not
// parse). A null `reply` means none came in time. Thread-safe.
StatusOr<nlohmann::json> ApiReplyJson(natsMsg* reply, const std::string& what,
                                      int* api_error = nullptr);

// The consumer info reply of the agent's durable, read as above. Errors as ApiReplyJson.
StatusOr<DurableInfo> ParseDurableInfo(natsMsg* reply, const std::string& what);

// The stream info reply: its first and last sequence. Errors as ApiReplyJson. Thread-safe.
StatusOr<StreamState> ParseStreamState(natsMsg* reply, const std::string& what);

// The reply to a $JS.API.STREAM.MSG.GET request with `seq` and `next_by_subj`: the stream
// sequence of the first message on that subject filter at or after `seq`, or 0 when the stream
// holds none (JetStream error 10037, no message found). Other errors as ApiReplyJson; kInternal
// for a reply with no sequence. Thread-safe.
StatusOr<uint64_t> ParseNextSequence(natsMsg* reply, const std::string& what);

}  // namespace agentckpt
