// Deterministic texts that are hard for a token counter, by script (CJK, rare CJK ideographs,
// emoji with ZWJ sequences, Thai, mathematical symbols, base64, code, mixed scripts, text that
// expands under NFKC, odd whitespace, long single-letter runs), and the reference count of
// texts by js-tiktoken (tools/tiktoken/count_tokens.mjs, run with node): an implementation
// independent of the C++ counter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "replay/replay_source.h"
#include "restore/token_counter.h"

namespace agentckpt::testing {

// The scripts HostileText can write.
const std::vector<std::string>& HostileScripts();

// A text of about `bytes` bytes (never less) in `script`, different for each `seed`; valid UTF-8.
std::string HostileText(const std::string& script, uint64_t seed, size_t bytes);

// Rewrites `cp`'s draft and gathered results (keeping their sizes) and replaces `replay` by 50
// messages (30 handled) whose bodies are 2 KB of `script`: the inputs of the hostile prompts.
void MakeHostilePromptInputs(const std::string& script, Checkpoint* cp, ReplayResult* replay);

// The token count of each text by js-tiktoken under `encoding`. Empty (with a test failure
// recorded) if node could not run.
std::vector<size_t> ReferenceCounts(const std::vector<std::string>& texts, TokenEncoding encoding);

}  // namespace agentckpt::testing
