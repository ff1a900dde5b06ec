// RFC 3339 timestamps as used in checkpoint documents: "2026-11-03T02:45:00.000Z".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace agentckpt {

// Formats milliseconds since the Unix epoch as UTC with exactly three fraction digits and "Z".
// Valid for years 0001-9999.
std::string FormatRfc3339Millis(int64_t unix_millis);

// Parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)" (the 'T' and 'Z' may be lower case).
// Fractions beyond milliseconds are truncated. Returns kInvalidArgument with the reason.
StatusOr<int64_t> ParseRfc3339Millis(std::string_view text);

}  // namespace agentckpt
