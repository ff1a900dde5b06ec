#include "replay/jetstream_info.h"

#include <nlohmann/json.hpp>

#include "common/status_macros.h"
#include "nats/nats_handles.h"

namespace agentckpt {
namespace {

using nlohmann::json;

// The JetStream API's error codes for a missing stream or consumer.
constexpr int kStreamNotFound = 10059;
constexpr int kConsumerNotFound = 10014;

// One request on the JetStream API; the reply's JSON, or its error as a Status.
StatusOr<json> ApiRequest(natsConnection* connection, const std::string& subject,
                          const std::string& what, int64_t wait_ms) {
  natsMsg* reply_raw = nullptr;
  natsStatus s = natsConnection_Request(&reply_raw, connection, subject.c_str(), "", 0,
                                        std::max<int64_t>(1, wait_ms));
  nats_handles::MsgPtr reply(reply_raw);
  std::string prefix = "replay: " + what + ": ";
  if (s == NATS_TIMEOUT) return DeadlineExceededError(prefix + "no answer in time");
  if (s != NATS_OK) return UnavailableError(prefix + natsStatus_GetText(s));
  const char* data = natsMsg_GetData(reply.get());
  json j = json::parse(data == nullptr ? "" : data,
                       data == nullptr ? nullptr : data + natsMsg_GetDataLength(reply.get()),
                       nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InternalError(prefix + "the reply is not a JSON object");
  if (j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    int code = e.value("err_code", 0);
    std::string message = prefix + e.value("description", std::string("error")) +
                          " (JetStream error " + std::to_string(code) + ")";
    if (code == kStreamNotFound || code == kConsumerNotFound) return NotFoundError(message);
    return FailedPreconditionError(message);
  }
  return j;
}

uint64_t U64(const json& j, const char* object, const char* key) {
  if (!j.contains(object) || !j[object].is_object()) return 0;
  const json& o = j[object];
  return o.contains(key) && o[key].is_number_unsigned() ? o[key].get<uint64_t>() : 0;
}

}  // namespace

StatusOr<DurableInfo> ReadDurableInfo(natsConnection* connection, const std::string& stream,
                                      const std::string& consumer, int64_t wait_ms) {
  ASSIGN_OR_RETURN(json j,
                   ApiRequest(connection, "$JS.API.CONSUMER.INFO." + stream + "." + consumer,
                              "consumer '" + consumer + "' of stream '" + stream + "'", wait_ms));
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

StatusOr<StreamState> ReadStreamState(natsConnection* connection, const std::string& stream,
                                      int64_t wait_ms) {
  ASSIGN_OR_RETURN(json j, ApiRequest(connection, "$JS.API.STREAM.INFO." + stream,
                                      "stream '" + stream + "'", wait_ms));
  StreamState state;
  state.first_seq = U64(j, "state", "first_seq");
  state.last_seq = U64(j, "state", "last_seq");
  return state;
}

}  // namespace agentckpt
