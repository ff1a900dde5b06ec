#include "tests/support/jetstream_fixture.h"

#include <utility>

#include "common/status_macros.h"
#include "nats/nats_connect.h"
#include "nats/nats_handles.h"

namespace agentckpt::testing {
namespace {

constexpr int64_t kWaitMillis = 5000;

Status NatsError(natsStatus s, const std::string& what, jsErrCode jerr = jsErrCode(0)) {
  std::string message = what + ": " + natsStatus_GetText(s);
  if (jerr != 0) message += " (JetStream error " + std::to_string(jerr) + ")";
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  if (detail != nullptr && *detail != '\0') message += std::string(": ") + detail;
  if (s == NATS_NOT_FOUND) return NotFoundError(message);
  if (s == NATS_TIMEOUT) return DeadlineExceededError(message);
  return UnavailableError(message);
}

jsOptions WaitOptions() {
  jsOptions opts;
  jsOptions_Init(&opts);
  opts.Wait = kWaitMillis;
  return opts;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const StreamSnapshot& s) {
  return os << "{msgs=" << s.msgs << " bytes=" << s.bytes << " first_seq=" << s.first_seq
            << " last_seq=" << s.last_seq << " consumers=" << s.consumers << "}";
}

std::ostream& operator<<(std::ostream& os, const ConsumerSnapshot& c) {
  return os << "{delivered=" << c.delivered_consumer_seq << "/" << c.delivered_stream_seq
            << " ack_floor=" << c.ack_floor_consumer_seq << "/" << c.ack_floor_stream_seq
            << " num_ack_pending=" << c.num_ack_pending << " num_redelivered=" << c.num_redelivered
            << " num_waiting=" << c.num_waiting << " num_pending=" << c.num_pending << "}";
}

StatusOr<std::unique_ptr<JetStreamTestClient>> JetStreamTestClient::Connect(
    const std::string& url) {
  ASSIGN_OR_RETURN(nats_handles::ConnectionPtr connection, ConnectNatsUrl(url));
  natsConnection* nc = connection.release();
  jsCtx* js = nullptr;
  jsOptions opts = WaitOptions();
  natsStatus s = natsConnection_JetStream(&js, nc, &opts);
  if (s != NATS_OK) {
    natsConnection_Destroy(nc);
    return NatsError(s, "JetStream context");
  }
  return std::unique_ptr<JetStreamTestClient>(new JetStreamTestClient(nc, js));
}

JetStreamTestClient::~JetStreamTestClient() {
  jsCtx_Destroy(js_);
  natsConnection_Close(connection_);
  natsConnection_Destroy(connection_);
}

Status JetStreamTestClient::CreateStream(const std::string& name,
                                         const std::vector<std::string>& subjects,
                                         jsRetentionPolicy retention) {
  std::vector<const char*> subject_ptrs;
  for (const auto& s : subjects) subject_ptrs.push_back(s.c_str());
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = name.c_str();
  config.Subjects = subject_ptrs.data();
  config.SubjectsLen = static_cast<int>(subject_ptrs.size());
  config.Storage = js_FileStorage;
  config.Retention = retention;
  jsOptions opts = WaitOptions();
  jsErrCode jerr = jsErrCode(0);
  jsStreamInfo* si = nullptr;
  natsStatus s = js_AddStream(&si, js_, &config, &opts, &jerr);
  jsStreamInfo_Destroy(si);
  if (s != NATS_OK) return NatsError(s, "create stream " + name, jerr);
  return OkStatus();
}

Status JetStreamTestClient::CreateDurablePullConsumer(const std::string& stream,
                                                      const std::string& durable,
                                                      const std::string& filter_subject) {
  jsConsumerConfig config;
  jsConsumerConfig_Init(&config);
  config.Durable = durable.c_str();
  config.AckPolicy = js_AckExplicit;
  config.DeliverPolicy = js_DeliverAll;
  config.FilterSubject = filter_subject.empty() ? nullptr : filter_subject.c_str();
  jsOptions opts = WaitOptions();
  jsErrCode jerr = jsErrCode(0);
  jsConsumerInfo* ci = nullptr;
  natsStatus s = js_AddConsumer(&ci, js_, stream.c_str(), &config, &opts, &jerr);
  jsConsumerInfo_Destroy(ci);
  if (s != NATS_OK) return NatsError(s, "create consumer " + durable, jerr);
  return OkStatus();
}

StatusOr<uint64_t> JetStreamTestClient::Publish(const std::string& subject,
                                                const std::string& body) {
  jsPubAck* ack = nullptr;
  jsErrCode jerr = jsErrCode(0);
  natsStatus s = js_Publish(&ack, js_, subject.c_str(), body.data(), static_cast<int>(body.size()),
                            nullptr, &jerr);
  if (s != NATS_OK) {
    jsPubAck_Destroy(ack);
    return NatsError(s, "publish on " + subject, jerr);
  }
  uint64_t seq = ack->Sequence;
  jsPubAck_Destroy(ack);
  return seq;
}

StatusOr<std::vector<uint64_t>> JetStreamTestClient::PublishN(const std::string& subject, int count,
                                                              const std::string& body_prefix) {
  std::vector<uint64_t> seqs;
  for (int i = 1; i <= count; ++i) {
    auto seq = Publish(subject, body_prefix + std::to_string(i));
    if (!seq.ok()) return seq.status();
    seqs.push_back(*seq);
  }
  return seqs;
}

StatusOr<int> JetStreamTestClient::Fetch(const std::string& stream, const std::string& durable,
                                         int count, uint64_t through_seq, Reply reply) {
  jsSubOptions sub_opts;
  jsSubOptions_Init(&sub_opts);
  sub_opts.Stream = stream.c_str();
  sub_opts.Consumer = durable.c_str();
  jsOptions opts = WaitOptions();
  jsErrCode jerr = jsErrCode(0);
  natsSubscription* sub = nullptr;
  natsStatus s = js_PullSubscribe(&sub, js_, nullptr, durable.c_str(), &opts, &sub_opts, &jerr);
  if (s != NATS_OK) return NatsError(s, "bind to " + durable, jerr);

  int done = 0;
  Status status;
  while (status.ok() && (count == 0 || done < count)) {
    jsFetchRequest request;
    jsFetchRequest_Init(&request);
    request.Batch = 1;
    request.NoWait = true;
    request.Expires = kWaitMillis * 1000 * 1000;
    natsMsgList list = {nullptr, 0};
    s = natsSubscription_FetchRequest(&list, sub, &request);
    if (s == NATS_NOT_FOUND || (s == NATS_OK && list.Count == 0)) {
      natsMsgList_Destroy(&list);
      break;  // nothing more to deliver
    }
    if (s != NATS_OK) {
      status = NatsError(s, "fetch from " + durable);
      break;
    }
    natsMsg* msg = list.Msgs[0];
    uint64_t seq = 0;
    jsMsgMetaData* meta = nullptr;
    if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) seq = meta->Sequence.Stream;
    jsMsgMetaData_Destroy(meta);
    if (reply == Reply::kAck) {
      s = natsMsg_AckSync(msg, &opts, &jerr);
      if (s != NATS_OK) status = NatsError(s, "ack", jerr);
    } else if (reply == Reply::kNak) {
      s = natsMsg_Nak(msg, &opts);
      if (s == NATS_OK) s = natsConnection_Flush(connection_);
      if (s != NATS_OK) status = NatsError(s, "nak");
    }
    natsMsgList_Destroy(&list);
    if (!status.ok()) break;
    ++done;
    if (through_seq != 0 && seq >= through_seq) break;
  }
  agentckpt::nats_handles::UnsubscribeAndDestroy(connection_, sub);
  if (!status.ok()) return status;
  return done;
}

StatusOr<int> JetStreamTestClient::FetchAndAckThrough(const std::string& stream,
                                                      const std::string& durable,
                                                      uint64_t stream_seq) {
  return Fetch(stream, durable, 0, stream_seq, Reply::kAck);
}

StatusOr<int> JetStreamTestClient::FetchWithoutAck(const std::string& stream,
                                                   const std::string& durable, int count) {
  return Fetch(stream, durable, count, 0, Reply::kNone);
}

StatusOr<int> JetStreamTestClient::FetchAndNak(const std::string& stream,
                                               const std::string& durable, int count) {
  return Fetch(stream, durable, count, 0, Reply::kNak);
}

StatusOr<StreamSnapshot> JetStreamTestClient::SnapshotStream(const std::string& stream) {
  jsOptions opts = WaitOptions();
  jsErrCode jerr = jsErrCode(0);
  jsStreamInfo* si = nullptr;
  natsStatus s = js_GetStreamInfo(&si, js_, stream.c_str(), &opts, &jerr);
  if (s != NATS_OK) return NatsError(s, "stream info " + stream, jerr);
  StreamSnapshot snap;
  snap.msgs = si->State.Msgs;
  snap.bytes = si->State.Bytes;
  snap.first_seq = si->State.FirstSeq;
  snap.last_seq = si->State.LastSeq;
  snap.consumers = si->State.Consumers;
  jsStreamInfo_Destroy(si);
  return snap;
}

StatusOr<ConsumerSnapshot> JetStreamTestClient::SnapshotConsumer(const std::string& stream,
                                                                 const std::string& durable) {
  jsOptions opts = WaitOptions();
  jsErrCode jerr = jsErrCode(0);
  jsConsumerInfo* ci = nullptr;
  natsStatus s = js_GetConsumerInfo(&ci, js_, stream.c_str(), durable.c_str(), &opts, &jerr);
  if (s != NATS_OK) return NatsError(s, "consumer info " + durable, jerr);
  ConsumerSnapshot snap;
  snap.delivered_consumer_seq = ci->Delivered.Consumer;
  snap.delivered_stream_seq = ci->Delivered.Stream;
  snap.ack_floor_consumer_seq = ci->AckFloor.Consumer;
  snap.ack_floor_stream_seq = ci->AckFloor.Stream;
  snap.num_ack_pending = ci->NumAckPending;
  snap.num_redelivered = ci->NumRedelivered;
  snap.num_waiting = ci->NumWaiting;
  snap.num_pending = ci->NumPending;
  jsConsumerInfo_Destroy(ci);
  return snap;
}

}  // namespace agentckpt::testing
