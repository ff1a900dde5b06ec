#include "restore/token_counter.h"

#include "common/utf8.h"
#include "restore/token_counter_bpe.h"

namespace agentckpt {
namespace {

using token_internal::BpeEncoding;

bool IsAsciiLetter(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

// Calls f on consecutive chunks of `text` such that the tokens of the text are the tokens of its
// chunks, one after the other: a cut is made only where both encodings' pre-tokenizers always
// end a piece, whatever comes before or after (their regexes have no look-behind, and the only
// look-ahead, in \s+(?!\S), is never reached across these cuts):
//  - after '\n' when the next byte is printable ASCII other than ' ' and '/': no piece goes on
//    past a line break except over more whitespace, more line breaks or (o200k) a '/';
//  - before ' ' between two ASCII letters: a run of letters ends at the space, and the space
//    starts the next word's piece (" word").
// So memoizing chunks is exact, and chunks are short (words, lines) in most texts.
template <typename F>
void ForEachChunk(std::string_view text, F&& f) {
  size_t start = 0;
  for (size_t i = 1; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto before = static_cast<unsigned char>(text[i - 1]);
    bool cut = (before == '\n' && c > ' ' && c < 0x7F && c != '/') ||
               (c == ' ' && IsAsciiLetter(before) && i + 1 < text.size() &&
                IsAsciiLetter(static_cast<unsigned char>(text[i + 1])));
    if (cut) {
      f(text.substr(start, i - start));
      start = i;
    }
  }
  if (start < text.size()) f(text.substr(start));
}

}  // namespace

std::string_view TokenEncodingName(TokenEncoding encoding) {
  return encoding == TokenEncoding::kCl100kBase ? "cl100k_base" : "o200k_base";
}

StatusOr<TokenEncoding> ParseTokenEncoding(std::string_view name) {
  if (name == "o200k_base") return TokenEncoding::kO200kBase;
  if (name == "cl100k_base") return TokenEncoding::kCl100kBase;
  return InvalidArgumentError("unknown tokenizer \"" + std::string(name) +
                              "\" (use o200k_base or cl100k_base)");
}

size_t CountTokens(std::string_view text, TokenEncoding encoding) {
  if (!IsValidUtf8(text)) return CountTokens(Utf8Sanitize(text), encoding);
  const BpeEncoding& bpe = BpeEncoding::Get(encoding);
  size_t tokens = 0;
  ForEachChunk(text, [&](std::string_view chunk) { tokens += bpe.CountValidUtf8(chunk); });
  return tokens;
}

TokenCounter::TokenCounter(TokenEncoding encoding) : encoding_(encoding) {}

size_t TokenCounter::Count(std::string_view text) {
  if (!IsValidUtf8(text)) return Count(Utf8Sanitize(text));
  const BpeEncoding& bpe = BpeEncoding::Get(encoding_);
  size_t tokens = 0;
  ForEachChunk(text, [&](std::string_view chunk) {
    auto it = memo_.find(chunk);
    if (it != memo_.end()) {
      tokens += it->second;
      return;
    }
    size_t n = bpe.CountValidUtf8(chunk);
    if (memo_bytes_ + chunk.size() > kMaxMemoBytes) {
      memo_.clear();
      memo_bytes_ = 0;
    }
    memo_.emplace(std::string(chunk), static_cast<uint32_t>(n));
    memo_bytes_ += chunk.size() + 64;  // the text and about what a map node costs
    tokens += n;
  });
  return tokens;
}

}  // namespace agentckpt
