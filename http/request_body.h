// ParseRequestBody: the JSON body of an API request, parsed once for every route (api_router.h,
// tool_call_routes.cc, gate_api.h). Thread-safe; never throws.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace agentckpt {

// The body's one JSON value (checkpoint/json_value.h: simdjson, about four times faster than
// nlohmann's parser on the ~1 KB bodies agents send). kInvalidArgument "document: malformed JSON
// (or not UTF-8)" for text that is not exactly one JSON value in UTF-8, including nesting deeper
// than 1,024 levels and integer literals beyond the 64-bit range (write those as decimals with
// an exponent).
StatusOr<nlohmann::json> ParseRequestBody(std::string_view body);

}  // namespace agentckpt
