#include "store/jetstream/jetstream_record.h"

#include <openssl/evp.h>

#include <nlohmann/json.hpp>

namespace agentckpt {
namespace {

using nlohmann::json;

bool GetInt(const json& j, const char* key, int64_t* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return false;
  *out = it->get<int64_t>();
  return true;
}

bool GetString(const json& j, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return false;
  *out = it->get<std::string>();
  return true;
}

}  // namespace

std::string EncodeAgentRecord(const JsAgentRecord& r) {
  json list = json::array();
  for (const JsCheckpointRef& c : r.checkpoints) {
    list.push_back(json{{"seq", c.sequence},
                        {"id", c.checkpoint_id},
                        {"ts", c.timestamp_ms},
                        {"trigger", std::string(TriggerReasonName(c.trigger_reason))},
                        {"size", c.size_bytes},
                        {"expireAt", c.expire_at_ms},
                        {"sha256", c.content_sha256}});
  }
  json j{{"v", 1},
         {"agentId", r.agent_id},
         {"status", r.status},
         {"updatedAt", r.updated_at_ms},
         {"lastSequence", r.last_sequence},
         {"leaseHolder", r.lease_holder},
         {"leaseEpoch", r.lease_epoch},
         {"leaseExpiresAtMs", r.lease_expires_at_ms},
         {"journalCompacted", r.journal_compacted},
         {"checkpoints", std::move(list)}};
  return j.dump();
}

StatusOr<JsAgentRecord> DecodeAgentRecord(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return DataLossError("agent record: not a JSON object");
  int64_t version = 0;
  if (!GetInt(j, "v", &version) || version != 1) {
    return DataLossError("agent record: unknown version");
  }
  JsAgentRecord r;
  if (!GetString(j, "agentId", &r.agent_id) || !GetString(j, "status", &r.status) ||
      !GetInt(j, "updatedAt", &r.updated_at_ms) || !GetInt(j, "lastSequence", &r.last_sequence) ||
      !GetString(j, "leaseHolder", &r.lease_holder) || !GetInt(j, "leaseEpoch", &r.lease_epoch) ||
      !GetInt(j, "leaseExpiresAtMs", &r.lease_expires_at_ms) ||
      !GetInt(j, "journalCompacted", &r.journal_compacted)) {
    return DataLossError("agent record: a field is missing or of the wrong type");
  }
  auto list = j.find("checkpoints");
  if (list == j.end() || !list->is_array()) {
    return DataLossError("agent record: no checkpoints list");
  }
  for (const json& c : *list) {
    JsCheckpointRef ref;
    std::string trigger;
    if (!c.is_object() || !GetInt(c, "seq", &ref.sequence) ||
        !GetString(c, "id", &ref.checkpoint_id) || !GetInt(c, "ts", &ref.timestamp_ms) ||
        !GetString(c, "trigger", &trigger) || !GetInt(c, "size", &ref.size_bytes) ||
        !GetInt(c, "expireAt", &ref.expire_at_ms) || !GetString(c, "sha256", &ref.content_sha256)) {
      return DataLossError("agent record: a checkpoint entry is malformed");
    }
    auto reason = ParseTriggerReason(trigger);
    if (!reason) return DataLossError("agent record: unknown trigger " + trigger);
    ref.trigger_reason = *reason;
    r.checkpoints.push_back(std::move(ref));
  }
  return r;
}

StatusOr<std::string> DecodeBase64(std::string_view text) {
  if (text.size() % 4 != 0) return DataLossError("base64 text of a length not a multiple of 4");
  std::string out(text.size() / 4 * 3, '\0');
  if (text.empty()) return out;
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) return DataLossError("bad base64 text");
  size_t pad = 0;
  if (text.back() == '=') ++pad;
  if (text.size() > 1 && text[text.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

std::map<std::string, std::string> ParseNatsHeaders(std::string_view block) {
  std::map<std::string, std::string> out;
  size_t pos = block.find("\r\n");  // the status line "NATS/1.0"
  while (pos != std::string_view::npos && pos + 2 < block.size()) {
    size_t start = pos + 2;
    size_t end = block.find("\r\n", start);
    std::string_view line =
        block.substr(start, end == std::string_view::npos ? block.npos : end - start);
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string key(line.substr(0, colon));
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      out.emplace(std::move(key), std::string(value));
    }
    pos = end;
  }
  return out;
}

AgentRecord ToAgentRecord(const JsAgentRecord& r) {
  AgentRecord out;
  out.agent_id = r.agent_id;
  out.status = r.status;
  out.updated_at_ms = r.updated_at_ms;
  out.last_sequence = r.last_sequence;
  out.lease_holder = r.lease_holder;
  out.lease_epoch = r.lease_epoch;
  out.lease_expires_at_ms = r.lease_expires_at_ms;
  return out;
}

CheckpointInfo ToCheckpointInfo(const std::string& agent_id, const JsCheckpointRef& ref) {
  CheckpointInfo info;
  info.checkpoint_id = ref.checkpoint_id;
  info.agent_id = agent_id;
  info.sequence_number = ref.sequence;
  info.timestamp_ms = ref.timestamp_ms;
  info.trigger_reason = ref.trigger_reason;
  info.size_bytes = ref.size_bytes;
  info.expire_at_ms = ref.expire_at_ms;
  info.content_sha256 = ref.content_sha256;
  return info;
}

}  // namespace agentckpt
