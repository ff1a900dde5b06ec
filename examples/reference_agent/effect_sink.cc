#include "examples/reference_agent/effect_sink.h"

#include <nlohmann/json.hpp>

#include "nats/nats_handles.h"

namespace reference_agent {
namespace {

using nlohmann::json;

agentckpt::StatusOr<json> Request(natsConnection* nc, const std::string& subject, const json& body,
                                  int timeout_ms) {
  const std::string data = body.dump();
  natsMsg* reply_raw = nullptr;
  natsStatus s = natsConnection_Request(&reply_raw, nc, subject.c_str(), data.data(),
                                        static_cast<int>(data.size()), timeout_ms);
  agentckpt::nats_handles::MsgPtr reply(reply_raw);
  if (s != NATS_OK) {
    return agentckpt::UnavailableError(subject + ": " + natsStatus_GetText(s));
  }
  const char* text = natsMsg_GetData(reply.get());
  json parsed = json::parse(text, text + natsMsg_GetDataLength(reply.get()), nullptr, false);
  if (!parsed.is_object()) return agentckpt::InternalError(subject + ": reply is not an object");
  return parsed;
}

}  // namespace

std::string SinkFilter(const std::string& agent) { return "sink." + agent + ".>"; }
std::string SinkExecSubject(const std::string& agent) { return "sink." + agent + ".exec"; }
std::string SinkLookupSubject(const std::string& agent) { return "sink." + agent + ".lookup"; }

agentckpt::StatusOr<int> SinkExecute(natsConnection* nc, const std::string& agent,
                                     const std::string& key, uint64_t seq,
                                     const std::string& result, int timeout_ms) {
  auto reply = Request(nc, SinkExecSubject(agent),
                       json{{"key", key}, {"seq", seq}, {"result", result}}, timeout_ms);
  if (!reply.ok()) return reply.status();
  const json& n = (*reply)["executions"];
  if (!n.is_number_integer()) return agentckpt::InternalError("sink exec: no executions count");
  return n.get<int>();
}

agentckpt::StatusOr<bool> SinkLookup(natsConnection* nc, const std::string& agent,
                                     const std::string& key, int timeout_ms) {
  auto reply = Request(nc, SinkLookupSubject(agent), json{{"key", key}}, timeout_ms);
  if (!reply.ok()) return reply.status();
  const json& executed = (*reply)["executed"];
  if (!executed.is_boolean()) return agentckpt::InternalError("sink lookup: no answer");
  return executed.get<bool>();
}

}  // namespace reference_agent
