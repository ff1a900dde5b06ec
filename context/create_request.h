// The payload of a checkpoint request (NATS agent.{agentId}.checkpoint.create and the body of
// POST /v1/checkpoints), parsed and checked without side effects. Pure functions: safe from any
// thread, never throw.
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
// ("manual" or "pre_compaction") and optional "taskId" (string), and no other member. Members
// are checked in the order of their names, so of several bad members the first by name is
// reported (taskId before trigger). kInvalidArgument whose message starts with the offending
// field ("payload: ..." for the whole payload, "trigger: ...", "taskId: ...", "<name>: unknown
// field"). On an error, `*field` (when given) is set to the offending field ("trigger",
// "taskId", the unknown member's name, `""` for a member with an empty name) or to "" when the
// whole payload is at fault.
StatusOr<CreateRequest> ParseCreateRequest(std::string_view payload, std::string* field = nullptr);

// The trigger a possibly rejected `payload` asked for: its "trigger" member when that is
// "manual" or "pre_compaction", else manual (the default of a request).
TriggerReason RequestedTrigger(std::string_view payload);

}  // namespace agentckpt
