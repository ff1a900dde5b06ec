#include "replay/jetstream_info.h"

#include <nlohmann/json.hpp>

#include "common/status_macros.h"
#include "nats/jetstream_errors.h"

namespace agentckpt {
namespace {

using nlohmann::json;
using jetstream_errors::kConsumerNotFound;
using jetstream_errors::kNotEnabled;
using jetstream_errors::kNotEnabledForAccount;
using jetstream_errors::kStreamNotFound;

}  // namespace

StatusOr<json> ApiReplyJson(natsMsg* reply, const std::string& what, int* api_error) {
  const std::string prefix = "replay: " + what + ": ";
  if (reply == nullptr) return DeadlineExceededError(prefix + "no answer in time");
  if (natsMsg_IsNoResponders(reply)) {
    return UnavailableError(prefix + "no responders (is JetStream enabled?)");
  }
  const char* data = natsMsg_GetData(reply);
  json j = json::parse(data == nullptr ? "" : data,
                       data == nullptr ? nullptr : data + natsMsg_GetDataLength(reply), nullptr,
                       /*allow_exceptions=*/false);
  if (!j.is_object()) return InternalError(prefix + "the reply is not a JSON object");
  if (j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    int code =
        e.contains("err_code") && e["err_code"].is_number_integer() ? e["err_code"].get<int>() : 0;
    if (api_error != nullptr) *api_error = code;
    std::string message = prefix + e.value("description", std::string("error")) +
                          " (JetStream error " + std::to_string(code) + ")";
    if (code == kStreamNotFound || code == kConsumerNotFound) return NotFoundError(message);
    if (code == kNotEnabled || code == kNotEnabledForAccount) return UnavailableError(message);
    return FailedPreconditionError(message);
  }
  return j;
}

namespace {

uint64_t U64(const json& j, const char* object, const char* key) {
  if (!j.contains(object) || !j[object].is_object()) return 0;
  const json& o = j[object];
  return o.contains(key) && o[key].is_number_unsigned() ? o[key].get<uint64_t>() : 0;
}

}  // namespace

StatusOr<DurableInfo> ParseDurableInfo(natsMsg* reply, const std::string& what) {
  ASSIGN_OR_RETURN(json j, ApiReplyJson(reply, what));
  DurableInfo info;
  const json config = j.value("config", json::object());
  if (config.contains("filter_subjects") && config["filter_subjects"].is_array()) {
    for (const json& f : config["filter_subjects"]) {
      if (f.is_string() && !f.get<std::string>().empty()) {
        info.filter_subjects.push_back(f.get<std::string>());
      }
    }
  }
  std::string single = config.value("filter_subject", std::string());
  if (!single.empty() && info.filter_subjects.empty()) info.filter_subjects.push_back(single);
  info.ack_floor = U64(j, "ack_floor", "stream_seq");
  info.delivered_stream = U64(j, "delivered", "stream_seq");
  info.num_pending = j.contains("num_pending") && j["num_pending"].is_number_unsigned()
                         ? j["num_pending"].get<uint64_t>()
                         : 0;
  return info;
}

StatusOr<StreamState> ParseStreamState(natsMsg* reply, const std::string& what) {
  ASSIGN_OR_RETURN(json j, ApiReplyJson(reply, what));
  StreamState state;
  state.first_seq = U64(j, "state", "first_seq");
  state.last_seq = U64(j, "state", "last_seq");
  return state;
}

}  // namespace agentckpt
