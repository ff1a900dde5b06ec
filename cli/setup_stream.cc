#include "cli/setup_stream.h"

#include <nats/nats.h>

#include <cctype>
#include <memory>
#include <set>
#include <string_view>

#include "common/status_macros.h"
#include "nats/nats_connect.h"
#include "nats/nats_handles.h"

namespace agentckpt {
namespace {

constexpr int64_t kNanosPerSecond = 1000000000;

using nats_handles::ConsumerInfoPtr;
using nats_handles::JsCtxPtr;
using nats_handles::StreamInfoPtr;

Status CheckName(const char* what, const std::string& name) {
  if (name.empty()) return InvalidArgumentError(std::string(what) + ": required");
  for (char c : name) {
    if (c == '.' || c == '*' || c == '>' || c == '/' || c == '\\' ||
        std::isspace(static_cast<unsigned char>(c)) ||
        std::iscntrl(static_cast<unsigned char>(c))) {
      return InvalidArgumentError(std::string(what) + ": \"" + name +
                                  "\" may not contain '.', '*', '>', '/', '\\' or whitespace");
    }
  }
  if (name.size() > 255) return InvalidArgumentError(std::string(what) + ": longer than 255");
  return OkStatus();
}

Status FromJetStream(natsConnection* nc, natsStatus s, jsErrCode jerr, const std::string& what) {
  std::string detail = NatsErrorDetail(s);
  if (jerr == JSNotEnabledErr || jerr == JSNotEnabledForAccountErr) {
    return FailedPreconditionError(what + ": JetStream is not enabled for this account");
  }
  if (jerr == JSStreamSubjectOverlapErr) {
    return FailedPreconditionError(what + ": its subjects overlap with another stream's (" +
                                   detail + ")");
  }
  if (s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS) {
    const char* last = nullptr;
    natsConnection_GetLastError(nc, &last);
    if (last != nullptr &&
        std::string_view(last).find("Permissions Violation") != std::string_view::npos) {
      return PermissionDeniedError(what + ": " + last);
    }
    return DeadlineExceededError(what +
                                 ": no JetStream answer (is JetStream enabled, and may "
                                 "these credentials publish to $JS.API?)");
  }
  if (s == NATS_NOT_PERMITTED) return PermissionDeniedError(what + ": " + detail);
  return InternalError(what + ": " + detail +
                       (jerr != 0 ? " (JetStream error " + std::to_string(jerr) + ")" : ""));
}

std::vector<std::string> StreamDifferences(const jsStreamConfig& have, const jsStreamConfig& want) {
  std::vector<std::string> diffs;
  std::set<std::string> have_subjects(have.Subjects, have.Subjects + have.SubjectsLen);
  std::set<std::string> want_subjects(want.Subjects, want.Subjects + want.SubjectsLen);
  auto join = [](const std::set<std::string>& s) {
    std::string out;
    for (const std::string& x : s) out += (out.empty() ? "" : ",") + x;
    return out;
  };
  if (have_subjects != want_subjects) {
    diffs.push_back("subjects are " + join(have_subjects) + ", want " + join(want_subjects));
  }
  if (have.Storage != want.Storage) diffs.push_back("storage is memory, want file");
  if (have.Retention != want.Retention) diffs.push_back("retention is not limits");
  if (have.Replicas != want.Replicas) {
    diffs.push_back("replicas are " + std::to_string(have.Replicas) + ", want " +
                    std::to_string(want.Replicas));
  }
  if (have.MaxAge != want.MaxAge) {
    diffs.push_back("max age is " + std::to_string(have.MaxAge / kNanosPerSecond) + "s, want " +
                    std::to_string(want.MaxAge / kNanosPerSecond) + "s");
  }
  return diffs;
}

std::vector<std::string> ConsumerDifferences(const jsConsumerConfig& have,
                                             const jsConsumerConfig& want) {
  std::vector<std::string> diffs;
  if (have.DeliverSubject != nullptr && *have.DeliverSubject != '\0') {
    diffs.push_back("it is a push consumer (deliver subject " + std::string(have.DeliverSubject) +
                    "), want pull");
  }
  if (have.AckPolicy != js_AckExplicit) diffs.push_back("ack policy is not explicit");
  if (have.DeliverPolicy != js_DeliverAll) diffs.push_back("deliver policy is not all");
  std::string have_filter = have.FilterSubject == nullptr ? "" : have.FilterSubject;
  std::string want_filter = want.FilterSubject == nullptr ? "" : want.FilterSubject;
  if (have_filter != want_filter) {
    diffs.push_back("filter subject is \"" + have_filter + "\", want \"" + want_filter + "\"");
  }
  return diffs;
}

Status Mismatch(const std::string& what, const std::vector<std::string>& diffs) {
  std::string msg = what + " exists with a different configuration: ";
  for (size_t i = 0; i < diffs.size(); ++i) msg += (i ? "; " : "") + diffs[i];
  return FailedPreconditionError(msg +
                                 " (change or delete it by hand; setup-stream never "
                                 "modifies an existing one)");
}

Status EnsureStream(natsConnection* nc, jsCtx* js, jsStreamConfig* want, jsOptions* jo,
                    bool* created) {
  const std::string what = "stream " + std::string(want->Name);
  for (int attempt = 0; attempt < 2; ++attempt) {
    jsStreamInfo* si_raw = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = js_GetStreamInfo(&si_raw, js, want->Name, jo, &jerr);
    StreamInfoPtr si(si_raw);
    if (s == NATS_OK) {
      std::vector<std::string> diffs = StreamDifferences(*si->Config, *want);
      if (!diffs.empty()) return Mismatch(what, diffs);
      return OkStatus();
    }
    if (jerr != JSStreamNotFoundErr && s != NATS_NOT_FOUND) {
      return FromJetStream(nc, s, jerr, "read " + what);
    }
    si_raw = nullptr;
    jerr = static_cast<jsErrCode>(0);
    s = js_AddStream(&si_raw, js, want, jo, &jerr);
    si.reset(si_raw);
    if (s == NATS_OK) {
      *created = true;
      return OkStatus();
    }
    // Created meanwhile by someone else: compare with what is there now.
    if (jerr != JSStreamNameExistErr) return FromJetStream(nc, s, jerr, "create " + what);
  }
  return InternalError(what + ": appeared and disappeared while being created");
}

Status EnsureConsumer(natsConnection* nc, jsCtx* js, const char* stream, jsConsumerConfig* want,
                      jsOptions* jo, bool* created) {
  const std::string what = "consumer " + std::string(want->Durable) + " on stream " + stream;
  jsConsumerInfo* ci_raw = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetConsumerInfo(&ci_raw, js, stream, want->Durable, jo, &jerr);
  ConsumerInfoPtr ci(ci_raw);
  if (s == NATS_OK) {
    std::vector<std::string> diffs = ConsumerDifferences(*ci->Config, *want);
    if (!diffs.empty()) return Mismatch(what, diffs);
    return OkStatus();
  }
  if (jerr != JSConsumerNotFoundErr && s != NATS_NOT_FOUND) {
    return FromJetStream(nc, s, jerr, "read " + what);
  }
  ci_raw = nullptr;
  jerr = static_cast<jsErrCode>(0);
  s = js_AddConsumer(&ci_raw, js, stream, want, jo, &jerr);
  ci.reset(ci_raw);
  if (s != NATS_OK) return FromJetStream(nc, s, jerr, "create " + what);
  // The server answers an identical create with the existing consumer, and a different one with
  // an error, so a concurrent creator cannot leave a mismatch unnoticed here.
  std::vector<std::string> diffs = ConsumerDifferences(*ci->Config, *want);
  if (!diffs.empty()) return Mismatch(what, diffs);
  *created = true;
  return OkStatus();
}

}  // namespace

StatusOr<NatsConnectionPtr> ConnectNats(const NatsClientOptions& o,
                                        const std::string& client_name) {
  return ConnectNatsOnce(o.nats_url, o, client_name, o.timeout_ms);
}

Status CheckNatsClientOptions(const NatsClientOptions& o) {
  if (o.nats_url.find("://") == std::string::npos) {
    return InvalidArgumentError("--nats: expected a URL like nats://host:4222, got \"" +
                                RedactNatsUrl(o.nats_url) + "\"");
  }
  if (o.user.empty() != o.password.empty()) {
    return InvalidArgumentError("--nats-user and --nats-password must be given together");
  }
  if (!o.nkey_public.empty() && o.nkey_seed_file.empty()) {
    return InvalidArgumentError("--nats-nkey needs --nats-nkey-seed");
  }
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return InvalidArgumentError("--nats-tls-cert and --nats-tls-key must be given together");
  }
  if (o.timeout_ms <= 0) return InvalidArgumentError("timeout: must be positive");
  return OkStatus();
}

Status SetupStream(const SetupStreamOptions& o, SetupStreamReport* report) {
  RETURN_IF_ERROR(CheckNatsClientOptions(o));
  RETURN_IF_ERROR(CheckName("--stream", o.stream));
  RETURN_IF_ERROR(CheckName("--consumer", o.consumer));
  ASSIGN_OR_RETURN(std::vector<std::string> subjects, ExpandSetupSubjects(o));
  if (o.replicas < 1 || o.replicas > 5) {
    return InvalidArgumentError("--replicas: expected 1 to 5, got " + std::to_string(o.replicas));
  }
  if (o.max_age_s < 0) return InvalidArgumentError("--max-age: negative");

  ASSIGN_OR_RETURN(NatsConnectionPtr nc, ConnectNats(o, "agentckpt setup-stream"));
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = o.timeout_ms;
  jsCtx* js_raw = nullptr;
  if (natsConnection_JetStream(&js_raw, nc.get(), &jo) != NATS_OK) {
    return InternalError("cannot create a JetStream context");
  }
  JsCtxPtr js(js_raw);

  std::vector<const char*> subject_ptrs;
  for (const std::string& s : subjects) subject_ptrs.push_back(s.c_str());
  const std::string description = "inbox of agent " + o.agent_id;
  jsStreamConfig sc;
  jsStreamConfig_Init(&sc);
  sc.Name = o.stream.c_str();
  sc.Description = description.c_str();
  sc.Subjects = subject_ptrs.data();
  sc.SubjectsLen = static_cast<int>(subject_ptrs.size());
  sc.Storage = js_FileStorage;
  sc.Retention = js_LimitsPolicy;
  sc.Replicas = o.replicas;
  sc.MaxAge = o.max_age_s * kNanosPerSecond;

  jsConsumerConfig cc;
  jsConsumerConfig_Init(&cc);
  cc.Durable = o.consumer.c_str();
  cc.Description = description.c_str();
  cc.AckPolicy = js_AckExplicit;
  cc.DeliverPolicy = js_DeliverAll;
  // One subject: filter on it. Several: the stream holds only the agent's subjects, and a
  // consumer with several filters needs nats-server 2.10, so the consumer takes the whole stream.
  cc.FilterSubject = subjects.size() == 1 ? subjects[0].c_str() : nullptr;

  SetupStreamReport local;
  SetupStreamReport* r = report != nullptr ? report : &local;
  *r = SetupStreamReport{};
  r->subjects = subjects;
  RETURN_IF_ERROR(EnsureStream(nc.get(), js.get(), &sc, &jo, &r->stream_created));
  return EnsureConsumer(nc.get(), js.get(), sc.Name, &cc, &jo, &r->consumer_created);
}

}  // namespace agentckpt
