#include "replay/jetstream_replay.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/status_macros.h"
#include "nats/nats_handles.h"
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

// The agent's durable consumer as seen right now.
struct DurableView {
  std::string filter_subject;  // empty: the whole stream
  uint64_t ack_floor = 0;      // stream sequence
  // True when the durable proves nothing matching came after the checkpoint's
  // lastAckedSequence: it has nothing left to deliver and has delivered nothing past it.
  bool nothing_after = false;
};

StatusOr<DurableView> ReadDurable(jsCtx* js, const NatsPosition& position,
                                  const Deadline& deadline) {
  jsErrCode jerr = static_cast<jsErrCode>(0);
  jsOptions opts = deadline.Options();
  jsConsumerInfo* ci_raw = nullptr;
  natsStatus s = js_GetConsumerInfo(&ci_raw, js, position.stream_name.c_str(),
                                    position.consumer_name.c_str(), &opts, &jerr);
  ConsumerInfoPtr ci(ci_raw);
  if (s != NATS_OK) {
    return FromNats(
        s, jerr,
        "consumer '" + position.consumer_name + "' of stream '" + position.stream_name + "'",
        deadline);
  }
  DurableView view;
  if (ci->Config != nullptr && ci->Config->FilterSubject != nullptr) {
    view.filter_subject = ci->Config->FilterSubject;
  }
  view.ack_floor = ci->AckFloor.Stream;
  view.nothing_after = ci->NumPending == 0 && ci->Delivered.Stream <= position.last_acked_sequence;
  return view;
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

  // Creates the consumer at `start_sequence` with `filter_subject` and binds a pull
  // subscription to it. Returns how many matching messages it had when created.
  StatusOr<uint64_t> Open(const std::string& filter_subject, uint64_t start_sequence,
                          const Deadline& deadline) {
    jsConsumerConfig config;
    jsConsumerConfig_Init(&config);
    config.Description = kEphemeralDescription;
    config.DeliverPolicy = js_DeliverByStartSequence;
    config.OptStartSeq = start_sequence;
    config.AckPolicy = js_AckNone;
    config.FilterSubject = filter_subject.empty() ? nullptr : filter_subject.c_str();
    config.InactiveThreshold = kEphemeralInactiveNanos;
    config.MemoryStorage = true;
    config.Replicas = 1;

    jsOptions opts = deadline.Options();
    jsErrCode jerr = static_cast<jsErrCode>(0);
    jsConsumerInfo* ci_raw = nullptr;
    natsStatus s = js_AddConsumer(&ci_raw, js_, stream_.c_str(), &config, &opts, &jerr);
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

    jsSubOptions sub_opts;
    jsSubOptions_Init(&sub_opts);
    sub_opts.Stream = stream_.c_str();
    sub_opts.Consumer = name_.c_str();
    sub_opts.Config = config;  // nats.c checks a bound consumer against the options it is given
    opts = deadline.Options();
    natsSubscription* sub_raw = nullptr;
    s = js_PullSubscribe(&sub_raw, js_, nullptr, nullptr, &opts, &sub_opts, &jerr);
    sub_.reset(sub_raw);
    if (s != NATS_OK) return FromNats(s, jerr, "bind to the replay consumer", deadline);
    return ci->NumPending + ci->Delivered.Consumer;
  }

  natsSubscription* subscription() const { return sub_.get(); }

 private:
  jsCtx* js_;
  std::string stream_;
  std::string name_;
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

  ASSIGN_OR_RETURN(DurableView durable, ReadDurable(js.get(), position, deadline));
  ReplayWindow window(durable.ack_floor, max_messages, max_body_bytes);
  if (durable.nothing_after) return window.TakeResult();

  {
    EphemeralReader reader(js.get(), position.stream_name);
    ASSIGN_OR_RETURN(uint64_t expected, reader.Open(durable.filter_subject,
                                                    position.last_acked_sequence + 1, deadline));
    RETURN_IF_ERROR(ReadMessages(connection_, reader.subscription(), expected, deadline, &window));
  }
  return window.TakeResult();
}

}  // namespace agentckpt
