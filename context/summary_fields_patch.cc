#include "context/summary_fields_patch.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace agentckpt {

using nlohmann::json;

namespace {

// The integer the general path's decoder accepts for completedSteps (0 to 2^63-1), if `v` is one.
std::optional<int64_t> NonNegativeInt64(const json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<int64_t>();
    if (i < 0) return std::nullopt;
    return i;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ContextSummary> SummaryWithFields(const ContextSummary& current,
                                                const json& summary_patch) {
  if (!summary_patch.is_object()) return std::nullopt;
  for (const auto& [key, value] : summary_patch.items()) {  // eligible at all?
    if (key == "systemPromptHash" || key == "gatheringResults" || key == "draftContent") {
      if (!value.is_string()) return std::nullopt;
    } else if (key == "completedSteps") {
      if (!NonNegativeInt64(value)) return std::nullopt;
    } else if (key == "planOutline") {
      if (!value.is_array()) return std::nullopt;
      for (const json& item : value) {
        if (!item.is_string()) return std::nullopt;
      }
    } else {
      return std::nullopt;  // toolCallLog, an unknown field
    }
  }
  ContextSummary s;
  s.system_prompt_hash = current.system_prompt_hash;
  s.gathering_results = current.gathering_results;
  s.plan_outline = current.plan_outline;
  s.completed_steps = current.completed_steps;
  s.draft_content = current.draft_content;
  for (const auto& [key, value] : summary_patch.items()) {
    if (key == "systemPromptHash") {
      s.system_prompt_hash = value.get_ref<const std::string&>();
    } else if (key == "gatheringResults") {
      s.gathering_results = value.get_ref<const std::string&>();
    } else if (key == "draftContent") {
      s.draft_content = value.get_ref<const std::string&>();
    } else if (key == "completedSteps") {
      s.completed_steps = *NonNegativeInt64(value);
    } else {  // planOutline: an RFC 7386 patch replaces an array whole
      s.plan_outline.clear();
      for (const json& item : value) s.plan_outline.push_back(item.get_ref<const std::string&>());
    }
  }
  return s;
}

}  // namespace agentckpt
