#include "sidecar/create_request.h"

#include <nlohmann/json.hpp>

namespace agentckpt {

StatusOr<CreateRequest> ParseCreateRequest(std::string_view payload) {
  using nlohmann::json;
  json body = json::parse(payload.empty() ? std::string_view("{}") : payload, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return InvalidArgumentError("payload: expected a JSON object");
  }
  CreateRequest req;
  // taskId is checked first: when both members are bad, the taskId message is reported.
  auto task = body.find("taskId");
  if (task != body.end()) {
    if (!task->is_string()) return InvalidArgumentError("taskId: expected a string");
    req.task_id = task->get<std::string>();
  }
  auto trigger = body.find("trigger");
  if (trigger != body.end()) {
    auto parsed =
        trigger->is_string() ? ParseTriggerReason(trigger->get<std::string>()) : std::nullopt;
    if (!parsed ||
        (*parsed != TriggerReason::kManual && *parsed != TriggerReason::kPreCompaction)) {
      return InvalidArgumentError("trigger: expected \"manual\" or \"pre_compaction\"");
    }
    req.trigger = *parsed;
  }
  return req;
}

}  // namespace agentckpt
