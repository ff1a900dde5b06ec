// JetStreamReplaySource: the dry-run replay of an agent's JetStream inbox after a checkpoint.
//
// What it reads (and nothing else), docs/replay.md in full:
//   1. The durable's consumer info and the stream's info, as JSON (replay/jetstream_info.h): its
//      filter subject(s) (several are refused: never replayed unfiltered), its ack floor, and the
//      stream's first/last sequence (messages after the checkpoint below the first one are
//      lost, and counted). The durable is only looked at; no fetch, next, ack or update is ever
//      sent to it, so its delivered and ack-floor sequences, num_pending, num_ack_pending,
//      num_redelivered and num_waiting stay exactly as they were.
//   2. The counts, from short-lived ephemeral pull consumers (replay/replay_consumers.h): one at
//      lastAckedSequence + 1 (all since the checkpoint), one at the ack floor + 1 (pending).
//   3. The newest messages only, through such a consumer started near the end of the stream: a
//      first guess (the newest 2 x max_messages sequences) is created with the counting ones,
//      and further probes (found by interpolation on the counts) only when it holds too few or
//      too many. So the cost does not grow with the backlog.
//   Requests that do not depend on each other are sent together on one private inbox and their
//   replies awaited together (replay/js_api_inbox.h): the two infos, then the consumers'
//   creations, then their deletions, each one round trip whatever their number; the messages
//   are fetched from the tail consumer directly.
//   Every ephemeral consumer is deleted before ReadSince returns (whatever the outcome).
//
// Why an ephemeral pull consumer, not an ordered push consumer or direct gets:
//   - Direct get (js_DirectGetMsg) needs allow_direct on the stream, which the agent's stream
//     may not have, and the plain stream msg get of nats.c 3.4.1 takes one round trip per
//     sequence and cannot filter; a long lag would mean thousands of round trips.
//   - An ordered push consumer (nats.c jsSubOptions.Ordered) needs a subscribe subject, so it
//     cannot follow a durable that has no filter subject on a multi-subject stream, and the
//     server pushes as fast as it can (flow control, heartbeats, consumer resets on gaps).
//   - A pull consumer lets this side set the pace: each fetch asks for a bounded batch (count
//     and bytes) with no_wait, so memory stays bounded however long the stream is, the filter
//     is applied by the server (nats-server 2.9 supports one filter subject per consumer, the
//     same as the durable's), and it works with nats-server 2.9.10 and nats.c 3.4.1.
//   The traffic this produces: requests on $JS.API.* with replies on _INBOX.*, the server's own
//   $JS.EVENT.ADVISORY.* notices, and the replayed messages delivered to this reader's inbox (a
//   wildcard subscriber sees them under their stored subjects, with a $JS.ACK reply naming the
//   ephemeral consumer; nothing ever acks them). Nothing is published on an application subject.
//
// Limits: messages up to the ack floor read at step 1 are handled, later ones pending (a message
// above the floor that was acked on its own still counts as pending). On a work-queue stream the
// server refuses a second consumer on the same subjects (kFailedPrecondition); on an interest
// stream messages the agent acknowledged may already be gone, so they cannot be replayed as
// handled context.
#pragma once

#include <nats/nats.h>

#include <chrono>
#include <cstddef>

#include "common/env.h"
#include "replay/replay_source.h"

namespace agentckpt {

class JetStreamReplaySource : public ReplaySource {
 public:
  // `connection` is borrowed: the caller owns it and keeps it open while this object is used.
  // Each ReadSince call must finish within `read_deadline` (measured on `env`'s monotonic
  // clock; `env` is borrowed, nullptr means Env::Default()).
  JetStreamReplaySource(natsConnection* connection, std::chrono::milliseconds read_deadline,
                        Env* env = nullptr);

  // See ReplaySource::ReadSince. Thread-safe (no mutable state; nats.c connections are
  // thread-safe). Errors: kNotFound (stream or consumer missing), kUnavailable (no connection,
  // no JetStream responder), kDeadlineExceeded (past the read deadline before the counts were
  // known; later, a partial result), kFailedPrecondition (several filter subjects, or the server
  // refused the ephemeral consumer, e.g. on a work-queue stream), kInternal (unexpected nats.c
  // failure).
  StatusOr<ReplayResult> ReadSince(const NatsPosition& position, size_t max_messages,
                                   size_t max_body_bytes) override;

 private:
  natsConnection* connection_;
  std::chrono::milliseconds read_deadline_;
  Env* env_;
};

}  // namespace agentckpt
