// The checkpoint endpoints (docs/http-api.md): POST /v1/checkpoints (a checkpoint now), GET
// /v1/checkpoints (the newest first) and GET /v1/checkpoints/{id} (one stored document).
#include <charconv>

#include "checkpoint/checkpoint_json.h"
#include "common/time_format.h"
#include "context/create_request.h"
#include "http/api_router.h"

namespace agentckpt {

using nlohmann::json;

ApiResponse ApiRouter::PostCheckpoint(const ApiRequest& req) {
  // The same rules as a NATS checkpoint.create request (sidecar/create_request.h).
  std::string field;
  auto parsed = ParseCreateRequest(req.body, &field);
  if (!parsed.ok()) return Error(400, "INVALID_ARGUMENT", parsed.status().message(), field);
  auto written = deps_.writer->Write(parsed->trigger, parsed->task_id);
  if (!written.ok()) return FromStatus(written.status());
  return Json(201, written->ToJson());
}

ApiResponse ApiRouter::ListCheckpoints(const ApiRequest& req) {
  int limit = 20;
  auto it = req.query.find("limit");
  if (it != req.query.end()) {
    const std::string& v = it->second;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), limit);
    if (ec != std::errc() || ptr != v.data() + v.size() || limit < 1 || limit > 1000) {
      return Error(400, "INVALID_ARGUMENT", "limit: expected an integer from 1 to 1000", "limit");
    }
  }
  auto rows = deps_.store->List(deps_.agent_id, limit);
  if (!rows.ok()) return FromStatus(rows.status());
  json list = json::array();
  for (const CheckpointInfo& info : *rows) {
    list.push_back({{"checkpointId", info.checkpoint_id},
                    {"sequenceNumber", info.sequence_number},
                    {"timestamp", FormatRfc3339Millis(info.timestamp_ms)},
                    {"triggerReason", std::string(TriggerReasonName(info.trigger_reason))},
                    {"sizeBytes", info.size_bytes},
                    {"expireAt", FormatRfc3339Millis(info.expire_at_ms)},
                    {"contentSha256", info.content_sha256}});
  }
  return Json(200, {{"checkpoints", list}});
}

ApiResponse ApiRouter::GetCheckpoint(const std::string& id) {
  auto cp = deps_.store->GetById(deps_.agent_id, id);
  if (!cp.ok()) return FromStatus(cp.status());
  ApiResponse r;
  r.body = CheckpointToJson(*cp);
  return r;
}

}  // namespace agentckpt
