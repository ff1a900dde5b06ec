// ParseJsonValue: parses JSON text into an nlohmann::json with simdjson (several times faster
// than nlohmann's own parser on text made mostly of long strings, such as journal entries,
// their payloads and request bodies). DumpJsonValue: the compact text of an nlohmann::json,
// byte for byte what nlohmann's dump() gives, without its per-byte UTF-8 decoder on strings.
// Thread-safe (a parser per thread); never throw.
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

// The same bytes as value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace): keys
// in the object's order, strings escaped as common/json_string.h says, numbers as nlohmann
// writes them. A value holding a string that is not well-formed UTF-8 is written by nlohmann
// itself (which replaces the bad bytes with U+FFFD).
std::string DumpJsonValue(const nlohmann::json& value);

}  // namespace agentckpt
