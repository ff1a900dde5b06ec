// Internal to restore/: text helpers and the warning, replay and workspace sections of the
// restoration prompt (prompt_builder.h describes the prompt). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "restore/prompt_builder.h"
#include "restore/prompt_fitter.h"

namespace agentckpt {

// Cut ranks of the sections (higher is cut first; 0 is never cut) and what the first cutting pass
// keeps of each (see prompt_fitter.h): items, or bytes for text sections.
inline constexpr int kRankPendingBodies = 9;
inline constexpr int kRankHandledBodies = 8;
inline constexpr int kRankGathered = 7;
inline constexpr int kRankToolCalls = 6;
inline constexpr int kRankWorkspaceFiles = 5;
inline constexpr int kRankDraft = 4;
inline constexpr int kRankPlan = 3;
inline constexpr int kRankGates = 2;
inline constexpr size_t kKeepGates = 10;
inline constexpr size_t kKeepPendingBodies = 2;
inline constexpr size_t kKeepHandledBodies = 8;
inline constexpr size_t kKeepGatheredBytes = 1200;
inline constexpr size_t kKeepToolCalls = 10;
inline constexpr size_t kKeepWorkspaceFiles = 10;
inline constexpr size_t kKeepDraftBytes = 800;

// "45 s", "12 min 5 s", "3 h 20 min", "2 d 4 h"; negative ages (clock skew) read "0 s".
std::string FormatAge(int64_t ms);
// `s` on one line inside double quotes (quotes and backslashes escaped, controls as \xNN).
std::string Quote(std::string_view s);
// `s` with ill-formed UTF-8 replaced, controls escaped and fence runs broken (untrusted_fence.h).
std::string SafeText(std::string_view s, bool single_line);
// The last `n` code points of well-formed UTF-8 `s`.
std::string Utf8TailChars(std::string_view s, size_t n);

// Warnings: stale, fallback, replay unavailable or truncated, workspace stashed, cold start.
PromptSection WarningsSection(const PromptInput& in);
// The tool-call ledger (restore/ledger_sections.cc): open calls of the checkpoint's ledger as
// outcome unknown (never cut; empty without any), and write calls completed since the
// checkpoint (cut like the tool calls).
PromptSection OutcomeUnknownSection(const PromptInput& in);
PromptSection CompletedWritesSection(const PromptInput& in);
// "Since the checkpoint": counts (never cut), then handled and pending bodies (cut first).
void AppendReplaySections(const PromptInput& in, const PromptOptions& opts,
                          std::vector<PromptSection>* out);
// Workspace at the checkpoint and now, with the stash if one was made.
void AppendWorkspaceSection(const PromptInput& in, const PromptOptions& opts,
                            std::vector<PromptSection>* out);

}  // namespace agentckpt
