#include "replay/jetstream_replay.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "common/status_macros.h"
#include "nats/nats_handles.h"
#include "replay/jetstream_info.h"
#include "replay/replay_window.h"

namespace agentckpt {
namespace {

using nats_handles::ConsumerInfoPtr;
using nats_handles::JsCtxPtr;
using nats_handles::MetaDataPtr;
using nats_handles::MsgList;
using nats_handles::SubscriptionPtr;

constexpr int kFetchBatch = 256;
constexpr int64_t kMinFetchBytes = int64_t{4} << 20;
constexpr int64_t kEphemeralInactiveNanos = int64_t{10} * 1000 * 1000 * 1000;
constexpr int64_t kCleanupWaitMillis = 1000;
constexpr const char* kEphemeralDescription = "agentckpt dry-run replay (read only)";
// The tail reader holds between max_messages and kTailSlack * max_messages messages.
constexpr uint64_t kTailSlack = 4;
constexpr int kMaxTailProbes = 16;

// The end of one ReadSince call on the monotonic clock.
class Deadline {
 public:
  Deadline(Env* env, std::chrono::milliseconds budget)
      : env_(env), end_micros_(env->NowMonotonicMicros() + budget.count() * 1000) {}
  int64_t RemainingMillis() const {
    int64_t left = end_micros_ - env_->NowMonotonicMicros();
    return left <= 0 ? 0 : (left + 999) / 1000;
  }
  bool Expired() const { return RemainingMillis() == 0; }
  // jsOptions whose API wait is the time left (at least 1 ms: 0 would mean the 5 s default).
  jsOptions Options() const {
    jsOptions opts;
    jsOptions_Init(&opts);
    opts.Wait = std::max<int64_t>(1, RemainingMillis());
    return opts;
  }
  // Options whose API wait is the time left, reading the clock once; false when none is left
  // (then nothing must be sent: a request that creates something must not outlive the call).
  bool OptionsIfLeft(jsOptions* opts) const {
    const int64_t left = RemainingMillis();
    if (left == 0) return false;
    jsOptions_Init(opts);
    opts->Wait = left;
    return true;
  }

 private:
  Env* env_;
  int64_t end_micros_;
};

// Turns a nats.c failure into a Status. `what` names the operation.
Status FromNats(natsStatus s, jsErrCode jerr, const std::string& what, const Deadline& deadline) {
  std::string message = "replay: " + what + ": " + natsStatus_GetText(s);
  if (jerr != 0) message += " (JetStream error " + std::to_string(jerr) + ")";
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  if (detail != nullptr && *detail != '\0') message += std::string(": ") + detail;

  if (jerr == JSStreamNotFoundErr || jerr == JSConsumerNotFoundErr) {
    return NotFoundError(std::move(message));
  }
  if (jerr == JSNotEnabledErr || jerr == JSNotEnabledForAccountErr) {
    return UnavailableError(std::move(message));
  }
  switch (s) {
    case NATS_TIMEOUT:
      return DeadlineExceededError(std::move(message));
    case NATS_CONNECTION_CLOSED:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_NO_SERVER:
    case NATS_STALE_CONNECTION:
    case NATS_NOT_YET_CONNECTED:
    case NATS_IO_ERROR:
    case NATS_NO_RESPONDERS:
      if (deadline.Expired()) return DeadlineExceededError(std::move(message));
      return UnavailableError(std::move(message));
    case NATS_NOT_FOUND:
      return NotFoundError(std::move(message));
    default:
      if (jerr != 0) return FailedPreconditionError(std::move(message));
      return InternalError(std::move(message));
  }
}

// The server's ways of saying a work-queue stream cannot have this reader beside the durable.
bool IsWorkQueueRefusal(jsErrCode jerr) {
  return jerr == JSConsumerPullRequiresAckErr || jerr == JSConsumerWQRequiresExplicitAckErr ||
         jerr == JSConsumerWQMultipleUnfilteredErr || jerr == JSConsumerWQConsumerNotUniqueErr ||
         jerr == JSConsumerWQConsumerNotDeliverAllErr;
}

// The short-lived consumer the messages are read through; deleted on destruction.
class EphemeralReader {
 public:
  EphemeralReader(jsCtx* js, std::string stream) : js_(js), stream_(std::move(stream)) {}
  ~EphemeralReader() {
    sub_.reset();  // unsubscribe the reply inbox first
    if (name_.empty()) return;
    jsOptions opts;
    jsOptions_Init(&opts);
    opts.Wait = kCleanupWaitMillis;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    // Best effort: if this fails the server drops it after its inactivity threshold.
    js_DeleteConsumer(js_, stream_.c_str(), name_.c_str(), &opts, &jerr);
  }
  EphemeralReader(const EphemeralReader&) = delete;
  EphemeralReader& operator=(const EphemeralReader&) = delete;

  // Creates the consumer at `start_sequence` with `filter_subject`. Returns how many matching
  // messages it had when created (the stream's own count: nothing is read).
  StatusOr<uint64_t> Open(const std::string& filter_subject, uint64_t start_sequence,
                          const Deadline& deadline) {
    jsConsumerConfig_Init(&config_);
    filter_ = filter_subject;
    config_.Description = kEphemeralDescription;
    config_.DeliverPolicy = js_DeliverByStartSequence;
    config_.OptStartSeq = start_sequence;
    config_.AckPolicy = js_AckNone;
    config_.FilterSubject = filter_.empty() ? nullptr : filter_.c_str();
    config_.InactiveThreshold = kEphemeralInactiveNanos;
    config_.MemoryStorage = true;
    config_.Replicas = 1;

    jsOptions opts;
    if (!deadline.OptionsIfLeft(&opts)) {
      return DeadlineExceededError("replay: read deadline exceeded");
    }
    jsErrCode jerr = static_cast<jsErrCode>(0);
    jsConsumerInfo* ci_raw = nullptr;
    natsStatus s = js_AddConsumer(&ci_raw, js_, stream_.c_str(), &config_, &opts, &jerr);
    ConsumerInfoPtr ci(ci_raw);
    if (s != NATS_OK) {
      Status status = FromNats(s, jerr, "create the replay consumer", deadline);
      if (IsWorkQueueRefusal(jerr)) {
        return FailedPreconditionError(
            "replay: a work-queue stream allows no second consumer beside the agent's: " +
            status.message());
      }
      return status;
    }
    name_ = ci->Name;
    count_ = ci->NumPending + ci->Delivered.Consumer;
    return count_;
  }

  // Binds a pull subscription to the consumer made by Open.
  Status Subscribe(const Deadline& deadline) {
    jsSubOptions sub_opts;
    jsSubOptions_Init(&sub_opts);
    sub_opts.Stream = stream_.c_str();
    sub_opts.Consumer = name_.c_str();
    sub_opts.Config = config_;  // nats.c checks a bound consumer against the options it is given
    jsOptions opts = deadline.Options();
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsSubscription* sub_raw = nullptr;
    natsStatus s = js_PullSubscribe(&sub_raw, js_, nullptr, nullptr, &opts, &sub_opts, &jerr);
    sub_.reset(sub_raw);
    if (s != NATS_OK) return FromNats(s, jerr, "bind to the replay consumer", deadline);
    return OkStatus();
  }

  uint64_t count() const { return count_; }
  natsSubscription* subscription() const { return sub_.get(); }

 private:
  jsCtx* js_;
  std::string stream_;
  std::string filter_;
  jsConsumerConfig config_;
  std::string name_;
  uint64_t count_ = 0;
  SubscriptionPtr sub_;
};

// Fetches messages until `expected` (the count when the reader was created) were seen or the
// server has none left, and feeds them to `window`. Messages stored after the reader was created
// are not part of the replay.
Status ReadMessages(natsConnection* connection, natsSubscription* sub, uint64_t expected,
                    const Deadline& deadline, ReplayWindow* window) {
  const int64_t max_bytes =
      std::max<int64_t>(kMinFetchBytes, 2 * natsConnection_GetMaxPayload(connection));
  while (window->seen() < expected) {
    if (deadline.Expired()) return DeadlineExceededError("replay: read deadline exceeded");
    jsFetchRequest request;
    jsFetchRequest_Init(&request);
    request.Batch = static_cast<int>(std::min<uint64_t>(kFetchBatch, expected - window->seen()));
    request.MaxBytes = max_bytes;
    request.NoWait = true;
    request.Expires = std::max<int64_t>(1, deadline.RemainingMillis()) * 1000 * 1000;
    MsgList list;
    natsStatus s = natsSubscription_FetchRequest(list.get(), sub, &request);
    if (s == NATS_NOT_FOUND) return OkStatus();  // the reader has nothing more
    if (s != NATS_OK) return FromNats(s, static_cast<jsErrCode>(0), "fetch", deadline);
    if (list.size() == 0) return OkStatus();

    for (int i = 0; i < list.size() && window->seen() < expected; ++i) {
      natsMsg* msg = list[i];
      jsMsgMetaData* meta_raw = nullptr;
      s = natsMsg_GetMetaData(&meta_raw, msg);
      MetaDataPtr meta(meta_raw);
      if (s != NATS_OK) return FromNats(s, static_cast<jsErrCode>(0), "metadata", deadline);
      const char* data = natsMsg_GetData(msg);
      int size = natsMsg_GetDataLength(msg);
      window->Add(meta->Sequence.Stream, natsMsg_GetSubject(msg), meta->Timestamp / 1000000,
                  std::string_view(data == nullptr ? "" : data, size < 0 ? 0 : size));
      if (meta->NumPending == 0) return OkStatus();
    }
  }
  return OkStatus();
}

using ReaderPtr = std::unique_ptr<EphemeralReader>;

// A reader created at `start` (see EphemeralReader::Open).
StatusOr<ReaderPtr> OpenReader(jsCtx* js, const std::string& stream, const std::string& filter,
                               uint64_t start, const Deadline& deadline) {
  auto reader = std::make_unique<EphemeralReader>(js, stream);
  RETURN_IF_ERROR(reader->Open(filter, start, deadline).status());
  return reader;
}

// A reader near the end of the stream that holds at least `want` matching messages and, as far
// as the stream allows, at most kTailSlack times as many. `all` starts at `from` (the message
// after the checkpoint); the start is found by interpolation on the server's counts of probe
// readers, assuming matching messages are spread evenly: one probe when they are, a few more
// (at most kMaxTailProbes) when they are not. Probes not used are deleted.
StatusOr<ReaderPtr> TailReader(jsCtx* js, const std::string& stream, const std::string& filter,
                               ReaderPtr all, uint64_t from, uint64_t last_seq, uint64_t want,
                               const Deadline& deadline) {
  if (all->count() <= kTailSlack * want) return all;
  // `a` starts at seq_a and holds more than kTailSlack * want; fewer than `want` are at seq_b on.
  ReaderPtr a = std::move(all);
  uint64_t seq_a = from, count_a = a->count();
  uint64_t seq_b = last_seq + 1, count_b = 0;
  for (int i = 0; i < kMaxTailProbes && seq_b - seq_a > 1 && count_a > count_b; ++i) {
    const long double per_message =
        static_cast<long double>(seq_b - seq_a) / static_cast<long double>(count_a - count_b);
    const uint64_t back = static_cast<uint64_t>(
        std::ceil(static_cast<long double>(2 * want - count_b) * per_message));
    uint64_t start = seq_b > back ? seq_b - back : seq_a + 1;
    start = std::clamp(start, seq_a + 1, seq_b - 1);
    ASSIGN_OR_RETURN(ReaderPtr probe, OpenReader(js, stream, filter, start, deadline));
    const uint64_t count = probe->count();
    if (count >= want && count <= kTailSlack * want) return probe;
    if (count > kTailSlack * want) {
      a = std::move(probe);
      seq_a = start;
      count_a = count;
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
  jsOptions opts = deadline.Options();
  jsCtx* js_raw = nullptr;
  natsStatus s = natsConnection_JetStream(&js_raw, connection_, &opts);
  JsCtxPtr js(js_raw);
  if (s != NATS_OK) return FromNats(s, static_cast<jsErrCode>(0), "JetStream context", deadline);
  const std::string& stream = position.stream_name;

  ASSIGN_OR_RETURN(DurableInfo durable, ReadDurableInfo(connection_, stream, position.consumer_name,
                                                        deadline.Options().Wait));
  if (durable.filter_subjects.size() > 1) {
    std::string list;
    for (const std::string& f : durable.filter_subjects) list += (list.empty() ? "" : ", ") + f;
    return FailedPreconditionError(
        "replay: consumer '" + position.consumer_name + "' has " +
        std::to_string(durable.filter_subjects.size()) + " filter subjects (" + list +
        "); this replay reads through one filter subject (nats-server 2.9 / nats.c 3.4), so it "
        "refuses rather than replay the stream unfiltered");
  }
  const std::string filter = durable.filter_subjects.empty() ? "" : durable.filter_subjects[0];
  ASSIGN_OR_RETURN(StreamState state,
                   ReadStreamState(connection_, stream, deadline.Options().Wait));
  const uint64_t from = position.last_acked_sequence + 1;
  ReplayWindow window(durable.ack_floor, max_messages, max_body_bytes);
  const uint64_t lost = state.first_seq > from ? state.first_seq - from : 0;
  const bool nothing_after =
      from > state.last_seq ||
      (durable.num_pending == 0 && durable.delivered_stream <= position.last_acked_sequence);
  if (nothing_after) {
    ReplayResult empty = window.TakeResult();
    empty.lost = lost;
    return empty;
  }

  // The counts come from the server's own counts (readers created at the checkpoint and at the
  // ack floor), not from reading: the cost does not grow with the backlog.
  ASSIGN_OR_RETURN(ReaderPtr all, OpenReader(js.get(), stream, filter, from, deadline));
  const uint64_t total = all->count();
  uint64_t pending = total;
  if (durable.ack_floor >= from) {
    pending = 0;
    if (durable.ack_floor < state.last_seq) {
      ASSIGN_OR_RETURN(ReaderPtr above,
                       OpenReader(js.get(), stream, filter, durable.ack_floor + 1, deadline));
      pending = std::min(above->count(), total);
    }
  }

  // Then only the newest messages are read, through a reader near the tail.
  Status read = OkStatus();
  if (max_messages > 0 && total > 0) {
    StatusOr<ReaderPtr> tail = TailReader(js.get(), stream, filter, std::move(all), from,
                                          state.last_seq, max_messages, deadline);
    read = tail.status();
    if (read.ok()) read = (*tail)->Subscribe(deadline);
    if (read.ok()) {
      read =
          ReadMessages(connection_, (*tail)->subscription(), (*tail)->count(), deadline, &window);
    }
  }
  const uint64_t messages_read = window.seen();
  ReplayResult result = window.TakeResult();
  result.messages_read = messages_read;
  result.handled_count = total - pending;
  result.pending_count = pending;
  result.truncated = total > result.messages.size() ? total - result.messages.size() : 0;
  result.lost = lost;
  if (!read.ok()) {
    if (read.code() != StatusCode::kDeadlineExceeded) return read;
    result.partial = true;
    result.partial_reason = "the read deadline (" + std::to_string(read_deadline_.count()) +
                            " ms) passed after " + std::to_string(messages_read) + " of " +
                            std::to_string(total) + " messages: " + read.message();
  }
  return result;
}

}  // namespace agentckpt
