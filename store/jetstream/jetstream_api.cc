#include "store/jetstream/jetstream_api.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/json_member.h"
#include "common/status_macros.h"
#include "nats/jetstream_errors.h"
#include "nats/nats_connect.h"

namespace agentckpt {
namespace {

using nlohmann::json;

constexpr int kErrWrongLastSequence = jetstream_errors::kWrongLastSequence;
constexpr int kErrNoMessageFound = jetstream_errors::kNoMessageFound;
constexpr int kErrStreamNotFound = jetstream_errors::kStreamNotFound;
constexpr int kErrMessageTooLarge = jetstream_errors::kMessageTooLarge;

struct ApiError {
  int code = 0;
  int err_code = 0;
  std::string description;
};

// The "error" member of a JetStream API reply, if any. Never throws.
std::optional<ApiError> ErrorOf(const json& reply) {
  auto it = reply.find("error");
  if (it == reply.end() || !it->is_object()) return std::nullopt;
  ApiError e;
  e.code = JsonMemberOr(*it, "code", 0);
  e.err_code = JsonMemberOr(*it, "err_code", 0);
  e.description = JsonMemberOr(*it, "description", std::string("unknown error"));
  return e;
}

StatusOr<json> ParseReply(const std::string& text, const std::string& what) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return UnavailableError(what + ": the server's reply is not JSON");
  }
  return j;
}

std::string Describe(const ApiError& e) {
  return e.description + " (" + std::to_string(e.code) + "/" + std::to_string(e.err_code) + ")";
}

// The repair for a stream deleted while the store is open, for messages.
constexpr char kRecreateStream[] = "`agentckpt setup-store` creates it again";

// A stream the store checked when it opened is answered "not found": deleted since, most
// likely. kUnavailable, never kNotFound, which readers would take for "nothing stored".
Status StreamGone(const std::string& what, const ApiError& e) {
  return UnavailableError(what + ": " + Describe(e) +
                          "; the stream was there when the store opened: if it was deleted, " +
                          kRecreateStream + " (its data is gone)");
}

}  // namespace

std::string JsMessage::Header(const std::string& key) const {
  auto it = headers.find(key);
  return it == headers.end() ? std::string() : it->second;
}

JetStreamApi::JetStreamApi(JetStreamApiOptions options, nats_handles::ConnectionPtr nc)
    : options_(std::move(options)),
      env_(options_.env ? options_.env : Env::Default()),
      nc_(std::move(nc)) {}

JetStreamApi::~JetStreamApi() = default;

StatusOr<std::unique_ptr<JetStreamApi>> JetStreamApi::Connect(JetStreamApiOptions options) {
  // nats.c 3.4 takes a list of servers only through natsOptions_SetServers (natsOptions_SetURL
  // reads "a,b" as one URL): the options are made for the first server, then given them all.
  std::vector<std::string> servers;
  for (size_t start = 0; start <= options.servers.size();) {
    size_t comma = options.servers.find(',', start);
    if (comma == std::string::npos) comma = options.servers.size();
    if (comma > start) servers.push_back(options.servers.substr(start, comma - start));
    start = comma + 1;
  }
  if (servers.empty()) return InvalidArgumentError("no NATS server to connect to");
  ASSIGN_OR_RETURN(nats_handles::OptionsPtr opts, NewNatsOptions(servers.front(), options.auth));
  if (servers.size() > 1) {
    std::vector<const char*> list;
    for (const std::string& server : servers) list.push_back(server.c_str());
    natsOptions_SetURL(opts.get(), nullptr);
    natsStatus s = natsOptions_SetServers(opts.get(), list.data(), static_cast<int>(list.size()));
    if (s != NATS_OK) return NatsOptionError("NATS servers " + options.servers, s);
  }
  natsOptions_SetName(opts.get(), "agentckpt-store");
  natsOptions_SetTimeout(opts.get(), static_cast<int64_t>(options.request_timeout_ms));
  // Keep reconnecting (to any server of the list) for as long as the process lives; a call
  // made meanwhile is retried until its own retry_ms.
  natsOptions_SetMaxReconnect(opts.get(), -1);
  natsOptions_SetReconnectWait(opts.get(), 100);
  natsOptions_SetRetryOnFailedConnect(opts.get(), false, nullptr, nullptr);
  ASSIGN_OR_RETURN(nats_handles::ConnectionPtr nc,
                   ConnectWithOptions(opts.get(), options.servers, options.auth));
  return std::unique_ptr<JetStreamApi>(new JetStreamApi(std::move(options), std::move(nc)));
}

StatusOr<std::string> JetStreamApi::Request(const std::string& subject, std::string_view payload,
                                            const std::map<std::string, std::string>* headers) {
  const int64_t start = env_->NowMonotonicMicros();
  int64_t backoff_ms = 20;
  std::string last_error;
  for (;;) {
    natsMsg* raw = nullptr;
    natsStatus s = natsMsg_Create(&raw, subject.c_str(), nullptr, payload.data(),
                                  static_cast<int>(payload.size()));
    if (s != NATS_OK) return InternalError("natsMsg_Create: " + NatsErrorDetail(s));
    nats_handles::MsgPtr msg(raw);
    if (headers != nullptr) {
      for (const auto& [key, value] : *headers) {
        s = natsMsgHeader_Set(msg.get(), key.c_str(), value.c_str());
        if (s != NATS_OK) return InvalidArgumentError("header " + key + ": " + NatsErrorDetail(s));
      }
    }
    natsMsg* reply_raw = nullptr;
    requests_.fetch_add(1);
    s = natsConnection_RequestMsg(&reply_raw, nc_.get(), msg.get(), options_.request_timeout_ms);
    nats_handles::MsgPtr reply(reply_raw);
    if (s == NATS_OK) {
      const char* data = natsMsg_GetData(reply.get());
      return std::string(data ? data : "", static_cast<size_t>(natsMsg_GetDataLength(reply.get())));
    }
    if (s == NATS_CONNECTION_CLOSED || s == NATS_INVALID_ARG) {
      return UnavailableError("NATS request " + subject + ": " + NatsErrorDetail(s));
    }
    // No responders (no stream leader yet), a timeout, a reconnect in progress: try again.
    last_error = NatsErrorDetail(s);
    const int64_t spent_ms = (env_->NowMonotonicMicros() - start) / 1000;
    if (spent_ms + backoff_ms > options_.retry_ms) {
      const std::string hint = s == NATS_NO_RESPONDERS
                                   ? std::string(" (no stream takes the subject, or JetStream is "
                                                 "off: was a stream deleted? ") +
                                         kRecreateStream + ")"
                                   : "";
      return UnavailableError("JetStream did not answer " + subject + " within " +
                              std::to_string(options_.retry_ms) + " ms: " + last_error + hint);
    }
    env_->SleepForMicros(backoff_ms * 1000);
    backoff_ms = std::min<int64_t>(backoff_ms * 2, 500);
  }
}

StatusOr<uint64_t> JetStreamApi::Publish(const std::string& subject, std::string_view data,
                                         const std::map<std::string, std::string>& headers,
                                         const std::string& msg_id,
                                         std::optional<uint64_t> expect_last_subject_seq) {
  std::map<std::string, std::string> all = headers;
  all["Nats-Msg-Id"] = msg_id;
  if (expect_last_subject_seq) {
    all["Nats-Expected-Last-Subject-Sequence"] = std::to_string(*expect_last_subject_seq);
  }
  const int64_t start = env_->NowMonotonicMicros();
  for (int64_t backoff_ms = 20;; backoff_ms = std::min<int64_t>(backoff_ms * 2, 500)) {
    ASSIGN_OR_RETURN(std::string text, Request(subject, data, &all));
    ASSIGN_OR_RETURN(json reply, ParseReply(text, "publish to " + subject));
    if (auto e = ErrorOf(reply)) {
      if (e->err_code == kErrWrongLastSequence) {
        return AlreadyExistsError("publish to " + subject + ": " + Describe(*e));
      }
      if (e->err_code == kErrMessageTooLarge) {
        return ResourceExhaustedError("publish to " + subject + ": " + Describe(*e));
      }
      if (e->err_code == kErrStreamNotFound) return StreamGone("publish to " + subject, *e);
      // 503: the stream's group has no quorum right now; anything else is not going to change.
      const int64_t spent_ms = (env_->NowMonotonicMicros() - start) / 1000;
      if (e->code != 503 || spent_ms + backoff_ms > options_.retry_ms) {
        return UnavailableError("publish to " + subject + ": " + Describe(*e));
      }
      env_->SleepForMicros(backoff_ms * 1000);
      continue;
    }
    auto seq = reply.find("seq");
    if (seq == reply.end() || !seq->is_number_unsigned()) {
      return UnavailableError("publish to " + subject + ": no sequence in the acknowledgement");
    }
    return seq->get<uint64_t>();
  }
}

StatusOr<std::optional<JsMessage>> JetStreamApi::MsgGet(const std::string& stream,
                                                        const std::string& body) {
  const int64_t start = env_->NowMonotonicMicros();
  for (int64_t backoff_ms = 20;; backoff_ms = std::min<int64_t>(backoff_ms * 2, 500)) {
    ASSIGN_OR_RETURN(std::string text, Request("$JS.API.STREAM.MSG.GET." + stream, body, nullptr));
    ASSIGN_OR_RETURN(json reply, ParseReply(text, "read from " + stream));
    if (auto e = ErrorOf(reply)) {
      if (e->err_code == kErrNoMessageFound) return std::optional<JsMessage>();
      if (e->err_code == kErrStreamNotFound) return StreamGone("read from " + stream, *e);
      const int64_t spent_ms = (env_->NowMonotonicMicros() - start) / 1000;
      if (e->code != 503 || spent_ms + backoff_ms > options_.retry_ms) {
        return UnavailableError("read from " + stream + ": " + Describe(*e));
      }
      env_->SleepForMicros(backoff_ms * 1000);
      continue;
    }
    auto m = reply.find("message");
    if (m == reply.end() || !m->is_object()) {
      return UnavailableError("read from " + stream + ": no message in the reply");
    }
    JsMessage out;
    out.seq = JsonMemberOr(*m, "seq", uint64_t{0});
    out.subject = JsonMemberOr(*m, "subject", std::string());
    ASSIGN_OR_RETURN(out.data, DecodeBase64(JsonMemberOr(*m, "data", std::string())));
    if (auto h = m->find("hdrs"); h != m->end() && h->is_string()) {
      ASSIGN_OR_RETURN(std::string block, DecodeBase64(h->get<std::string>()));
      out.headers = ParseNatsHeaders(block);
    }
    return std::optional<JsMessage>(std::move(out));
  }
}

StatusOr<std::optional<JsMessage>> JetStreamApi::GetLast(const std::string& stream,
                                                         const std::string& subject) {
  return MsgGet(stream, json{{"last_by_subj", subject}}.dump());
}

StatusOr<std::optional<JsMessage>> JetStreamApi::GetNext(const std::string& stream, uint64_t from,
                                                         const std::string& subject) {
  return MsgGet(stream,
                json{{"seq", std::max<uint64_t>(from, 1)}, {"next_by_subj", subject}}.dump());
}

Status JetStreamApi::DeleteMessage(const std::string& stream, uint64_t seq) {
  json body{{"seq", seq}, {"no_erase", true}};
  ASSIGN_OR_RETURN(std::string text,
                   Request("$JS.API.STREAM.MSG.DELETE." + stream, body.dump(), nullptr));
  ASSIGN_OR_RETURN(json reply, ParseReply(text, "delete message " + std::to_string(seq)));
  if (auto e = ErrorOf(reply)) {
    // Already gone (a retry, or removed by another writer): "sequence N not found", or the
    // store's "no message found" wrapped as "message delete failed".
    if (e->err_code == jetstream_errors::kSequenceNotFound ||
        (e->err_code == jetstream_errors::kMessageDeleteFailed &&
         e->description.find("not found") != std::string::npos)) {
      return OkStatus();
    }
    return UnavailableError("delete message " + std::to_string(seq) + " of " + stream + ": " +
                            Describe(*e));
  }
  return OkStatus();
}

StatusOr<std::vector<std::string>> JetStreamApi::Subjects(const std::string& stream,
                                                          const std::string& filter) {
  std::vector<std::string> out;
  // The server answers at most a page of subjects per request; "offset" pages on.
  for (int page = 0; page < 100000; ++page) {
    json body{{"subjects_filter", filter}, {"offset", out.size()}};
    ASSIGN_OR_RETURN(std::string text,
                     Request("$JS.API.STREAM.INFO." + stream, body.dump(), nullptr));
    ASSIGN_OR_RETURN(json reply, ParseReply(text, "list " + stream));
    if (auto e = ErrorOf(reply)) return UnavailableError("list " + stream + ": " + Describe(*e));
    const json state = JsonObjectMember(reply, "state");
    const json subjects = JsonObjectMember(state, "subjects");
    const uint64_t total = JsonMemberOr(state, "num_subjects", uint64_t{0});
    if (subjects.empty()) break;
    for (auto it = subjects.begin(); it != subjects.end(); ++it) out.push_back(it.key());
    if (out.size() >= total) break;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Status JetStreamApi::EnsureStream(const JsStreamSpec& spec, bool create) {
  ASSIGN_OR_RETURN(std::string text, Request("$JS.API.STREAM.INFO." + spec.name, "", nullptr));
  ASSIGN_OR_RETURN(json info, ParseReply(text, "stream " + spec.name));
  if (auto e = ErrorOf(info)) {
    if (e->err_code != kErrStreamNotFound) {
      return UnavailableError("stream " + spec.name + ": " + Describe(*e));
    }
    if (!create) {
      return NotFoundError("stream " + spec.name +
                           " does not exist (agentckpt setup-store creates it, or add create=1 "
                           "to the store URL)");
    }
    json config{{"name", spec.name},
                {"subjects", spec.subjects},
                {"retention", "limits"},
                {"storage", "file"},
                {"discard", "old"},
                {"num_replicas", spec.replicas},
                {"max_msgs_per_subject", spec.max_msgs_per_subject},
                {"max_msg_size", spec.max_msg_size},
                {"duplicate_window", int64_t{120} * 1000 * 1000 * 1000},
                {"allow_rollup_hdrs", false},
                {"deny_delete", false},
                {"deny_purge", false}};
    ASSIGN_OR_RETURN(text, Request("$JS.API.STREAM.CREATE." + spec.name, config.dump(), nullptr));
    ASSIGN_OR_RETURN(json created, ParseReply(text, "create stream " + spec.name));
    if (auto e = ErrorOf(created)) {
      // Created meanwhile by another process with the same settings: fine.
      if (e->description.find("already in use") == std::string::npos) {
        return UnavailableError("create stream " + spec.name + ": " + Describe(*e));
      }
      return EnsureStream(spec, false);
    }
    return OkStatus();
  }
  const json config = JsonObjectMember(info, "config");
  std::vector<std::string> subjects;
  const json listed = JsonMemberOr(config, "subjects", json());
  for (const json& subject : listed.is_array() ? listed : json::array()) {
    if (subject.is_string()) subjects.push_back(subject.get<std::string>());
  }
  for (const std::string& want : spec.subjects) {
    if (std::find(subjects.begin(), subjects.end(), want) == subjects.end()) {
      return FailedPreconditionError("stream " + spec.name + " exists but does not capture " +
                                     want);
    }
  }
  const int64_t per_subject = JsonMemberOr(config, "max_msgs_per_subject", int64_t{-1});
  if (per_subject != spec.max_msgs_per_subject) {
    return FailedPreconditionError("stream " + spec.name + " exists with max_msgs_per_subject " +
                                   std::to_string(per_subject) + ", expected " +
                                   std::to_string(spec.max_msgs_per_subject));
  }
  return OkStatus();
}

Status JetStreamApi::DeleteStream(const std::string& name) {
  ASSIGN_OR_RETURN(std::string text, Request("$JS.API.STREAM.DELETE." + name, "", nullptr));
  ASSIGN_OR_RETURN(json reply, ParseReply(text, "delete stream " + name));
  if (auto e = ErrorOf(reply); e && e->err_code != kErrStreamNotFound) {
    return UnavailableError("delete stream " + name + ": " + Describe(*e));
  }
  return OkStatus();
}

StatusOr<JetStreamApi::StreamState> JetStreamApi::StreamPlacement(const std::string& name) {
  ASSIGN_OR_RETURN(std::string text, Request("$JS.API.STREAM.INFO." + name, "", nullptr));
  ASSIGN_OR_RETURN(json info, ParseReply(text, "stream " + name));
  if (auto e = ErrorOf(info)) {
    if (e->err_code == kErrStreamNotFound) return NotFoundError("stream " + name + " not found");
    return UnavailableError("stream " + name + ": " + Describe(*e));
  }
  const json config = JsonObjectMember(info, "config");
  StreamState out;
  out.replicas = JsonMemberOr(config, "num_replicas", 1);
  out.leader = JsonMemberOr(JsonObjectMember(info, "cluster"), "leader", std::string());
  out.messages = JsonMemberOr(JsonObjectMember(info, "state"), "messages", uint64_t{0});
  out.bytes = JsonMemberOr(JsonObjectMember(info, "state"), "bytes", uint64_t{0});
  return out;
}

}  // namespace agentckpt
