#include "replay/jetstream_replay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "common/status_macros.h"
#include "nats/nats_handles.h"
#include "replay/jetstream_info.h"
#include "replay/js_api_inbox.h"
#include "replay/replay_consumers.h"
#include "replay/replay_window.h"

namespace agentckpt {
namespace {

using nats_handles::MetaDataPtr;
using nats_handles::MsgPtr;

constexpr uint64_t kFetchBatch = 256;
constexpr int64_t kMinFetchBytes = int64_t{4} << 20;
// The tail reader holds between max_messages and kTailSlack * max_messages messages.
constexpr uint64_t kTailSlack = 4;
constexpr int kMaxTailProbes = 16;
// A range after the checkpoint of at most this many stream sequences (or kTailSlack x
// max_messages, if that is more) is read whole and its handled and pending messages counted one
// by one instead of taken from the server's counts. nats-server 2.9's count of the messages a
// wildcard-filtered consumer has pending is not reliable while the stream also holds messages
// outside the filter (seen here: 3 or 5 for the same three messages, alternating between calls
// with no client activity). Reading such a range costs no more than the tail read that a longer
// backlog needs anyway, so the cost still does not grow with the backlog.
constexpr uint64_t kExactCountSequences = 256;

// The end of one ReadSince call on the monotonic clock.
class Deadline {
 public:
  Deadline(Env* env, std::chrono::milliseconds budget)
      : env_(env), end_micros_(env->NowMonotonicMicros() + budget.count() * 1000) {}
  int64_t RemainingMillis() const {
    int64_t left = end_micros_ - env_->NowMonotonicMicros();
    return left <= 0 ? 0 : (left + 999) / 1000;
  }

 private:
  Env* env_;
  int64_t end_micros_;
};

Status ReadDeadlineExceeded() { return DeadlineExceededError("replay: read deadline exceeded"); }

// The status code of a JetStream status message ("NATS/1.0 404 No Messages"), 0 for none.
int StatusOfMessage(natsMsg* msg) {
  const char* value = nullptr;
  if (natsMsgHeader_Get(msg, "Status", &value) != NATS_OK || value == nullptr) return 0;
  return std::atoi(value);
}

// Reads the consumer `name` (created at stream sequence `start` on `filter`) from its start, in
// batches (kFetchBatch messages or `max_bytes`) with no_wait, until `expected` messages (its
// count when it was created) were seen or it has none left, and feeds them to `window`. The
// deadline is checked before each batch; a batch waits at most the time left when it was asked
// for. Messages stored after the consumer was created are not part of the replay. With `exact`,
// the server's pending count is not trusted to say when the consumer is drained (nats-server 2.9
// miscounts some wildcard filters): the read goes on until the server says it has no more or a
// message past `last_seq` comes, which is not kept.
//
// Each fetch goes out with a probe of the stream itself ($JS.API.STREAM.MSG.GET, next_by_subj):
// the first message on the filter at or after the next sequence not yet read. When the stream
// holds none up to `last_seq`, the read is over without waiting for the fetch's answer.
// nats-server 2.9 answers a no_wait fetch at once ("404 No Messages") only when its pending count
// for the consumer is 0; with that count wrong (above), a fetch on a drained consumer is held
// open with no expiry and nothing to deliver, and the replay waited out its whole deadline (1 run
// in 10 of RestoreJetStreamTest under ASan). Sent together, the probe adds no round trip.
Status ReadTail(JsApiInbox* inbox, const std::string& stream, const std::string& name,
                const std::string& filter, uint64_t start, uint64_t expected, uint64_t last_seq,
                bool exact, int64_t max_bytes, const Deadline& deadline, ReplayWindow* window) {
  const std::string next = "$JS.API.CONSUMER.MSG.NEXT." + stream + "." + name;
  const std::string get = "$JS.API.STREAM.MSG.GET." + stream;
  uint64_t next_seq = start;  // the first sequence of the reader's range not yet read
  while (window->seen() < expected) {
    const int64_t left_ms = deadline.RemainingMillis();
    if (left_ms == 0) return ReadDeadlineExceeded();
    const uint64_t batch = std::min<uint64_t>(kFetchBatch, expected - window->seen());
    // no_wait without "expires": nats-server 2.9 turns a no_wait request that also carries an
    // expiry into one that waits for it when the reader has no message at that moment (one whose
    // range holds only other subjects' messages), so a replay waited out its whole deadline.
    const nlohmann::json request = {{"batch", batch}, {"max_bytes", max_bytes}, {"no_wait", true}};
    const nlohmann::json probe = {{"seq", next_seq},
                                  {"next_by_subj", filter.empty() ? ">" : filter}};
    ASSIGN_OR_RETURN(int tag, inbox->Send(next, request.dump()));
    ASSIGN_OR_RETURN(int probe_tag, inbox->Send(get, probe.dump()));
    RETURN_IF_ERROR(inbox->Flush(left_ms));
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(left_ms);
    uint64_t got = 0;
    while (got < batch) {
      MsgPtr msg = inbox->Next(
          std::chrono::ceil<std::chrono::milliseconds>(end - std::chrono::steady_clock::now())
              .count());
      if (msg == nullptr) return inbox->MissingReply("fetch");
      const int reply_tag = inbox->TagOf(msg.get());
      if (reply_tag == probe_tag) {
        // An error (a user not allowed to read the stream directly) leaves it to the fetch.
        StatusOr<uint64_t> found = ParseNextSequence(msg.get(), "probe of stream '" + stream + "'");
        if (found.ok() && (*found == 0 || *found > last_seq)) return OkStatus();
        continue;
      }
      if (reply_tag == tag) {  // a status: no more messages in this batch
        const int code = StatusOfMessage(msg.get());
        if (code == 404 || code == 408 || code == 409) break;
        return UnavailableError("replay: fetch: unexpected reply (status " + std::to_string(code) +
                                ")");
      }
      jsMsgMetaData* meta_raw = nullptr;
      if (natsMsg_GetMetaData(&meta_raw, msg.get()) != NATS_OK) continue;  // not a delivery
      MetaDataPtr meta(meta_raw);
      if (exact && meta->Sequence.Stream > last_seq) return OkStatus();
      next_seq = std::max(next_seq, meta->Sequence.Stream + 1);
      const char* data = natsMsg_GetData(msg.get());
      const int size = natsMsg_GetDataLength(msg.get());
      window->Add(meta->Sequence.Stream, natsMsg_GetSubject(msg.get()), meta->Timestamp / 1000000,
                  std::string_view(data == nullptr ? "" : data, size < 0 ? 0 : size));
      ++got;
      if (window->seen() >= expected || meta->Sequence.Stream >= last_seq) return OkStatus();
      if (!exact && meta->NumPending == 0) return OkStatus();
    }
    if (got == 0) return OkStatus();  // the consumer has nothing more
  }
  return OkStatus();
}

// The reader to read the newest `want` messages through: of the readers created (each runs from
// its start to the end of the stream), the one with the fewest messages that still holds `want`
// (or, when none does, the one at the checkpoint, which holds them all). When it holds more than
// kTailSlack * want, further readers are created, at starts found by interpolation on the
// counts assuming matching messages are spread evenly (at most kMaxTailProbes, each one round
// trip), until one holds between `want` and kTailSlack * want.
StatusOr<size_t> TailReader(ReplayConsumers* readers, size_t all, uint64_t last_seq, uint64_t want,
                            const Deadline& deadline) {
  size_t a = all;  // holds at least `want` (or is the reader at the checkpoint)
  uint64_t seq_b = last_seq + 1, count_b = 0;  // fewer than `want` from seq_b on
  for (size_t i = 0; i < readers->size(); ++i) {
    if (!readers->created(i)) continue;
    const uint64_t count = readers->count(i);
    if (count >= want && count < readers->count(a)) a = i;
    if (count < want && readers->start(i) < seq_b) {
      seq_b = readers->start(i);
      count_b = count;
    }
  }
  for (int i = 0; i < kMaxTailProbes && readers->count(a) > kTailSlack * want &&
                  seq_b - readers->start(a) > 1 && readers->count(a) > count_b;
       ++i) {
    const uint64_t seq_a = readers->start(a);
    const long double per_message = static_cast<long double>(seq_b - seq_a) /
                                    static_cast<long double>(readers->count(a) - count_b);
    const uint64_t back = static_cast<uint64_t>(
        std::ceil(static_cast<long double>(2 * want - count_b) * per_message));
    const uint64_t start =
        std::clamp(seq_b > back ? seq_b - back : seq_a + 1, seq_a + 1, seq_b - 1);
    ASSIGN_OR_RETURN(size_t probe, readers->Create(start, deadline.RemainingMillis()));
    RETURN_IF_ERROR(readers->Await(deadline.RemainingMillis()));
    const uint64_t count = readers->count(probe);
    if (count >= want) {
      a = probe;
    } else {
      seq_b = start;
      count_b = count;
    }
  }
  return a;  // the nearest start found that holds enough; reading it is bounded by the deadline
}

}  // namespace

JetStreamReplaySource::JetStreamReplaySource(natsConnection* connection,
                                             std::chrono::milliseconds read_deadline, Env* env)
    : connection_(connection),
      read_deadline_(read_deadline),
      env_(env != nullptr ? env : Env::Default()) {}

StatusOr<ReplayResult> JetStreamReplaySource::ReadSince(const NatsPosition& position,
                                                        size_t max_messages,
                                                        size_t max_body_bytes) {
  Deadline deadline(env_, read_deadline_);
  if (position.stream_name.empty() || position.consumer_name.empty()) {
    return InvalidArgumentError("replay: natsPosition needs a stream and a consumer name");
  }
  if (connection_ == nullptr || natsConnection_Status(connection_) != NATS_CONN_STATUS_CONNECTED) {
    return UnavailableError("replay: not connected to NATS");
  }
  const std::string& stream = position.stream_name;
  const std::string& consumer = position.consumer_name;
  ASSIGN_OR_RETURN(std::unique_ptr<JsApiInbox> inbox, JsApiInbox::Open(connection_));

  // 1. The durable's info and the stream's info, asked for together.
  ASSIGN_OR_RETURN(int durable_tag,
                   inbox->Send("$JS.API.CONSUMER.INFO." + stream + "." + consumer, ""));
  ASSIGN_OR_RETURN(int stream_tag, inbox->Send("$JS.API.STREAM.INFO." + stream, ""));
  auto infos = inbox->Collect({durable_tag, stream_tag}, deadline.RemainingMillis());
  const std::string durable_what = "consumer '" + consumer + "' of stream '" + stream + "'";
  if (infos.count(durable_tag) == 0) return inbox->MissingReply(durable_what);
  ASSIGN_OR_RETURN(DurableInfo durable, ParseDurableInfo(infos[durable_tag].get(), durable_what));
  if (durable.filter_subjects.size() > 1) {
    std::string list;
    for (const std::string& f : durable.filter_subjects) list += (list.empty() ? "" : ", ") + f;
    return FailedPreconditionError(
        "replay: consumer '" + consumer + "' has " +
        std::to_string(durable.filter_subjects.size()) + " filter subjects (" + list +
        "); this replay reads through one filter subject (nats-server 2.9 / nats.c 3.4), so it "
        "refuses rather than replay the stream unfiltered");
  }
  const std::string filter = durable.filter_subjects.empty() ? "" : durable.filter_subjects[0];
  const std::string stream_what = "stream '" + stream + "'";
  if (infos.count(stream_tag) == 0) return inbox->MissingReply(stream_what);
  ASSIGN_OR_RETURN(StreamState state, ParseStreamState(infos[stream_tag].get(), stream_what));
  const uint64_t from = position.last_acked_sequence + 1;
  ReplayWindow window(durable.ack_floor, max_messages, max_body_bytes);
  const uint64_t lost = state.first_seq > from ? state.first_seq - from : 0;
  const uint64_t range = from > state.last_seq ? 0 : state.last_seq + 1 - from;
  const bool exact =
      range <= std::max<uint64_t>(kExactCountSequences, kTailSlack * uint64_t{max_messages});
  const bool nothing_after =
      range == 0 || (!exact && durable.num_pending == 0 &&
                     durable.delivered_stream <= position.last_acked_sequence);
  if (nothing_after) {
    ReplayResult empty = window.TakeResult();
    empty.lost = lost;
    return empty;
  }

  // 2. The counts come from the server's own counts (a reader created at the checkpoint, and one
  // at the ack floor), not from reading: the cost does not grow with the backlog. With a long
  // backlog, a first guess at a tail reader (the newest 2 x max_messages sequences, right when
  // the agent's messages are dense) is created with them: one round trip for all. When the ack
  // floor falls inside that guess (an agent that keeps up), no reader is created at the floor:
  // the tail is read from a start at or before it, so the pending messages are counted as they
  // are read, and a long backlog creates two readers, as a short one does.
  ReplayConsumers readers(inbox.get(), stream, filter);
  ASSIGN_OR_RETURN(size_t all, readers.Create(from, deadline.RemainingMillis()));
  const uint64_t want = max_messages;
  const uint64_t guess = state.last_seq + 1 - std::min<uint64_t>(state.last_seq, 2 * want);
  const bool tail_guess = !exact && want > 0 && range > kTailSlack * want && guess > from;
  const bool above_needed = durable.ack_floor >= from && durable.ack_floor < state.last_seq;
  // Every reader the tail may be read from starts at or before `guess` (TailReader only looks
  // further back from it), so with the floor at or after guess - 1 the read sees every pending
  // message.
  const bool pending_from_tail = tail_guess && above_needed && durable.ack_floor + 1 >= guess;
  size_t above = 0;
  if (above_needed && !pending_from_tail) {
    ASSIGN_OR_RETURN(above, readers.Create(durable.ack_floor + 1, deadline.RemainingMillis()));
  }
  if (tail_guess && !(above_needed && !pending_from_tail && guess == durable.ack_floor + 1)) {
    RETURN_IF_ERROR(readers.Create(guess, deadline.RemainingMillis()).status());
  }
  RETURN_IF_ERROR(readers.Await(deadline.RemainingMillis()));
  const uint64_t total = readers.count(all);
  uint64_t pending = total;
  if (durable.ack_floor >= from) {
    pending = above_needed && !pending_from_tail ? std::min(readers.count(above), total) : 0;
  }

  // 3. Then only the newest messages are read, through a reader near the tail; a short range is
  // read whole and counted (see kExactCountSequences).
  Status read = OkStatus();
  std::string pending_bound_note;
  const int64_t max_bytes =
      std::max<int64_t>(kMinFetchBytes, 2 * natsConnection_GetMaxPayload(connection_));
  if (exact) {
    read = ReadTail(inbox.get(), stream, readers.name(all), filter, from, range, state.last_seq,
                    true, max_bytes, deadline, &window);
  } else if (max_messages > 0 && total > 0) {
    StatusOr<size_t> tail = TailReader(&readers, all, state.last_seq, want, deadline);
    read = tail.status();
    uint64_t tail_count = 0;
    if (read.ok()) {
      tail_count = readers.count(*tail);
      read = ReadTail(inbox.get(), stream, readers.name(*tail), filter, readers.start(*tail),
                      tail_count, state.last_seq, false, max_bytes, deadline, &window);
    }
    if (pending_from_tail) {
      // Read whole, the tail holds every pending message. Cut short, the messages not read come
      // after the last one read: all pending if that one was at or past the floor; otherwise
      // how many of them are pending is not known, and the count is given as its upper bound.
      const bool started = tail_count > 0;
      const uint64_t unread = tail_count > window.seen() ? tail_count - window.seen() : 0;
      pending = std::min(total, window.pending() + (started ? unread : total));
      if (!read.ok() && (!started || (unread > 0 && window.last_sequence() < durable.ack_floor))) {
        pending_bound_note = "; the pending count (" + std::to_string(pending) +
                             ") is an upper bound: the read stopped before the ack floor";
      }
    }
  }
  const uint64_t messages_read = window.seen();
  ReplayResult result = window.TakeResult();
  result.messages_read = messages_read;
  if (!exact || !read.ok()) {  // counted by the server (a whole read sets them itself)
    result.handled_count = total - pending;
    result.pending_count = pending;
    result.truncated = total > result.messages.size() ? total - result.messages.size() : 0;
  }
  result.lost = lost;
  if (!read.ok()) {
    if (read.code() != StatusCode::kDeadlineExceeded) return read;
    result.partial = true;
    result.partial_reason = "the read deadline (" + std::to_string(read_deadline_.count()) +
                            " ms) passed after " + std::to_string(messages_read) + " of " +
                            std::to_string(total) + " messages: " + read.message() +
                            pending_bound_note;
  }
  return result;
  // 4. `readers` deletes every replay consumer on its way out, whatever happened.
}

}  // namespace agentckpt
