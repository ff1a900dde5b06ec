// Size limits of the checkpoint document. Lengths count Unicode code points.
#pragma once

#include <cstddef>

namespace agentckpt::limits {

inline constexpr size_t kToolCallLogEntries = 50;       // newest kept
inline constexpr size_t kToolInputSummaryChars = 200;   // head kept
inline constexpr size_t kToolOutputSummaryChars = 500;  // head kept
inline constexpr size_t kToolNameChars = 128;           // longer: rejected
inline constexpr size_t kGatheringResultsChars = 4000;  // head kept
inline constexpr size_t kDraftContentChars = 8000;      // tail kept (the end is where work resumes)
inline constexpr size_t kPlanOutlineItems = 100;        // more: rejected
inline constexpr size_t kPlanItemChars = 500;           // head kept
inline constexpr size_t kShortTextChars = 512;          // ids, titles, names, paths: rejected beyond
inline constexpr size_t kModifiedFiles = 1000;          // more: rejected
inline constexpr int kMaxTtlDays = 3650;
// base64 of an encrypted context summary (schema version 2): above the largest summary the
// limits above allow (about 0.8 MB even with every character escaped).
inline constexpr size_t kMaxCiphertextChars = 2u << 20;

}  // namespace agentckpt::limits
