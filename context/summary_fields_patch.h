// SummaryWithFields: the common PATCH /v1/context case, a merge patch that sets some of the
// summary's plain fields, applied without re-encoding and re-decoding the whole summary.
// Internal to context/. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "checkpoint/checkpoint.h"

namespace agentckpt {

// `current` with the fields that `summary_patch` (the patch's "contextSummary" object) sets:
// systemPromptHash, gatheringResults and draftContent (strings), completedSteps (an integer from
// 0 to 2^63-1) and planOutline (an array of strings). The result has no tool-call log (the caller
// keeps the current one). nullopt when the patch does anything else (removes a field with null,
// names the log or an unknown field, gives a value of another type or range): those take the
// general path, which decodes the merged summary and reports the error there. Not redacted,
// normalized or validated: the caller does that as for the general path.
std::optional<ContextSummary> SummaryWithFields(const ContextSummary& current,
                                                const nlohmann::json& summary_patch);

}  // namespace agentckpt
