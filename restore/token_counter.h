// Exact token counts of text sent to a language model, with a real BPE tokenizer: OpenAI's
// o200k_base (GPT-4o, o1, o3, GPT-4.1, GPT-5) or cl100k_base (GPT-4, GPT-3.5), chosen by
// CKPT_TOKENIZER. The count equals what tiktoken's encoders produce for the same text, so a
// prompt that fits by this count fits for real under that encoding.
//
// How: the rank tables are the ones the js-tiktoken npm package publishes, converted at build
// time (tools/tiktoken/convert_ranks.mjs) and embedded in the binary; the text is split by
// tiktoken's own pre-tokenizer regex (run by PCRE2 with Unicode properties) and each piece is
// merged by byte-pair ranks, lowest rank first, as tiktoken does. Text that looks like a special
// token ("<|endoftext|>") is counted as ordinary text, as model APIs treat text sent to them.
//
// Two deliberate departures, both of which can only raise the count:
//  - PCRE2 knows Unicode 14. A text piece holding a code point PCRE2 sees as unassigned (scripts
//    and ideographs added in Unicode 15 or later) may be split differently by a tokenizer with
//    newer tables, so such a piece (a word, or a line) is charged one token per byte, which no BPE
//    encoding can exceed.
//  - Ill-formed UTF-8 is counted as if each bad byte were U+FFFD.
// For model families whose tokenizer is not public (Claude 3 and later, Gemini), no count here is
// exact: see docs/configuration.md (CKPT_TOKENIZER) for the margin to leave.
//
// Thread-safe. The tables are loaded on first use (tens of milliseconds, once per encoding per
// process); counting is linear in the text's length. Never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/status.h"

namespace agentckpt {

enum class TokenEncoding { kO200kBase, kCl100kBase };

// "o200k_base" or "cl100k_base".
std::string_view TokenEncodingName(TokenEncoding encoding);

// The encoding named `name` ("o200k_base" or "cl100k_base"); INVALID_ARGUMENT otherwise.
StatusOr<TokenEncoding> ParseTokenEncoding(std::string_view name);

// Loads `encoding`'s rank table and compiles its pre-tokenizer now; otherwise the first count
// does it (about 6 ms for o200k_base on a 2-core machine). A count or another preload that
// comes while it runs waits for it instead of loading twice. Thread-safe.
void PreloadEncoding(TokenEncoding encoding);

// The number of tokens of `text` under `encoding` (0 for an empty text).
size_t CountTokens(std::string_view text, TokenEncoding encoding = TokenEncoding::kO200kBase);

// Counts like CountTokens, remembering the counts of the pieces it has seen (words, lines), so
// that counting many texts that share most of their content (the prompt fitter measuring one
// section cut in many ways) costs little more than reading them. Count(t) == CountTokens(t, enc)
// always. Not thread-safe: one instance per thread; memory is bounded (the memo is cleared when
// it holds kMaxMemoBytes of text).
class TokenCounter {
 public:
  static constexpr size_t kMaxMemoBytes = 8 << 20;

  explicit TokenCounter(TokenEncoding encoding = TokenEncoding::kO200kBase);

  // The number of tokens of `text`.
  size_t Count(std::string_view text);

  TokenEncoding encoding() const { return encoding_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  // Stores `tokens` as the count of `text` (clearing the memo first when it is full); returns it.
  size_t Remember(std::string_view text, size_t tokens);

  TokenEncoding encoding_;
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> memo_;
  size_t memo_bytes_ = 0;
};

}  // namespace agentckpt
