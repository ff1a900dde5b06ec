// The payload of a NATS checkpoint request (agent.{agentId}.checkpoint.create), parsed and
// checked without side effects. Pure function: safe from any thread, never throws.
#pragma once

#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"
#include "common/status.h"

namespace agentckpt {

struct CreateRequest {
  TriggerReason trigger = TriggerReason::kManual;  // "manual" (default) or "pre_compaction"
  std::string task_id;                             // optional; empty when absent
};

// Parses `payload`: an empty payload means {}; otherwise a JSON object with optional "trigger"
// ("manual" or "pre_compaction") and optional "taskId" (string). Other members are ignored.
// kInvalidArgument whose message starts with the offending field ("payload: ...",
// "trigger: ...", "taskId: ...").
StatusOr<CreateRequest> ParseCreateRequest(std::string_view payload);

}  // namespace agentckpt
