// The idempotency key of a tool call begun without one (docs/tool-call-ledger.md "Keys").
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace agentckpt {

// "d1:" followed by the SHA-256 hex of "<toolName>\n<argsSha256>\n<taskId>": the same tool with
// the same canonical arguments in the same task gets the same key, so a retry of the call after a
// crash finds the first attempt. `task_id` is "" when no task is active.
std::string DeriveIdempotencyKey(std::string_view tool_name, std::string_view args_sha256,
                                 std::string_view task_id);

}  // namespace agentckpt
