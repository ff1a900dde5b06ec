#include "replay/jetstream_info.h"

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/json_member.h"
#include "common/status_macros.h"
#include "nats/jetstream_errors.h"

namespace agentckpt {
namespace {

using jetstream_errors::kConsumerNotFound;
using jetstream_errors::kNoMessageFound;
using jetstream_errors::kNotEnabled;
using jetstream_errors::kNotEnabledForAccount;
using jetstream_errors::kStreamNotFound;
using nlohmann::json;

}  // namespace

StatusOr<json> ApiReplyJson(natsMsg* reply, const std::string& what, int* api_error) {
  const std::string prefix = "replay: " + what + ": ";
  if (reply == nullptr) return DeadlineExceededError(prefix + "no answer in time");
  if (natsMsg_IsNoResponders(reply)) {
    return UnavailableError(prefix + "no responders (is JetStream enabled?)");
  }
  const char* data = natsMsg_GetData(reply);
  const int size = natsMsg_GetDataLength(reply);
  const std::string_view text(data == nullptr ? "" : data,
                              data == nullptr || size < 0 ? 0 : static_cast<size_t>(size));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InternalError(prefix + "the reply is not a JSON object");
  if (j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    const int code = JsonMemberOr(e, "err_code", 0);
    if (api_error != nullptr) *api_error = code;
    std::string message = prefix + JsonMemberOr(e, "description", std::string("error")) +
                          " (JetStream error " + std::to_string(code) + ")";
    if (code == kStreamNotFound || code == kConsumerNotFound) return NotFoundError(message);
    if (code == kNotEnabled || code == kNotEnabledForAccount) return UnavailableError(message);
    // Class 503: the cluster cannot answer now (no leader, no quorum); asking later can work.
    if (JsonMemberOr(e, "code", 0) == 503) return UnavailableError(message);
    return FailedPreconditionError(message);
  }
  return j;
}

namespace {

uint64_t U64(const json& j, const char* object, const char* key) {
  return JsonMemberOr(JsonObjectMember(j, object), key, uint64_t{0});
}

}  // namespace

StatusOr<DurableInfo> ParseDurableInfo(natsMsg* reply, const std::string& what) {
  ASSIGN_OR_RETURN(json j, ApiReplyJson(reply, what));
  DurableInfo info;
  const json config = JsonObjectMember(j, "config");
  const json several = JsonMemberOr(config, "filter_subjects", json());
  if (several.is_array()) {
    for (const json& f : several) {
      if (f.is_string() && !f.get<std::string>().empty()) {
        info.filter_subjects.push_back(f.get<std::string>());
      }
    }
  }
  const std::string single = JsonMemberOr(config, "filter_subject", std::string());
  if (!single.empty() && info.filter_subjects.empty()) info.filter_subjects.push_back(single);
  info.ack_floor = U64(j, "ack_floor", "stream_seq");
  info.delivered_stream = U64(j, "delivered", "stream_seq");
  info.num_pending = JsonMemberOr(j, "num_pending", uint64_t{0});
  return info;
}

StatusOr<StreamState> ParseStreamState(natsMsg* reply, const std::string& what) {
  ASSIGN_OR_RETURN(json j, ApiReplyJson(reply, what));
  StreamState state;
  state.first_seq = U64(j, "state", "first_seq");
  state.last_seq = U64(j, "state", "last_seq");
  return state;
}

StatusOr<uint64_t> ParseNextSequence(natsMsg* reply, const std::string& what) {
  int api_error = 0;
  StatusOr<json> j = ApiReplyJson(reply, what, &api_error);
  if (!j.ok() && api_error == kNoMessageFound) return uint64_t{0};
  RETURN_IF_ERROR(j.status());
  const uint64_t seq = U64(*j, "message", "seq");
  if (seq == 0) return InternalError("replay: " + what + ": the reply names no message sequence");
  return seq;
}

}  // namespace agentckpt
