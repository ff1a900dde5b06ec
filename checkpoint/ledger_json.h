// JSON encoding, decoding and validation of the tool-call ledger (schema version 2;
// docs/checkpoint-format.md "ledger", docs/tool-call-ledger.md).
//
// The same strict rules as checkpoint_json.h: decoding errors are kInvalidArgument whose message
// starts with the field's path. Nothing here throws; all functions are thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/checkpoint.h"
#include "common/status.h"

namespace agentckpt {

// {"callId","idempotencyKey","toolName","effect","argsSha256","inputSummary","beganAt","state",
// "endedAt","result"}; endedAt and result are null while the call is open.
nlohmann::json LedgerCallToJsonValue(const LedgerCall& c);
// {"openCalls":[...],"completed":[...]}.
nlohmann::json LedgerToJsonValue(const Ledger& l);

// Decodes the forms above. kInvalidArgument naming the field.
StatusOr<LedgerCall> LedgerCallFromJsonValue(const nlohmann::json& j, const std::string& path);
StatusOr<Ledger> LedgerFromJsonValue(const nlohmann::json& j, const std::string& path);

// The schema's rules decoding alone does not check: ids and names not empty and at most
// limits::kShortTextChars, argsSha256 empty or 64 lower-case hex, summaries within their limits,
// open calls without a result and completed ones with one. kInvalidArgument naming the field.
Status ValidateLedger(const Ledger& l, const std::string& path);

}  // namespace agentckpt
