// ParseJsonValue: parses JSON text into an nlohmann::json with simdjson (several times faster
// than nlohmann's own parser on text made mostly of long strings, such as journal entries and
// their payloads). Thread-safe (a parser per thread); never throws.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace agentckpt {

// kInvalidArgument "document: not valid JSON (or not UTF-8): ..." when `text` is not one valid
// JSON value (nesting deeper than 1024 levels included). Numbers keep their kind: integers
// within int64 (or uint64) stay integers, others are doubles. A key given twice in one object
// keeps its last value.
StatusOr<nlohmann::json> ParseJsonValue(std::string_view text);

}  // namespace agentckpt
