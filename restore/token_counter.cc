#include "restore/token_counter.h"

#include <cstdint>

#include "common/utf8.h"
#include "restore/token_counter_bpe.h"

namespace agentckpt {
namespace {

using token_internal::BpeEncoding;

bool IsAsciiLetter(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

// Every code point that PCRE2's \s (with UCP), Rust's and JavaScript's take as white space.
bool IsSpaceInAnyEngine(uint32_t cp) {
  return cp <= ' ' || cp == 0x85 || cp == 0xA0 || cp == 0x1680 || cp == 0x180E ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

// True if a piece always starts at text[i] when text[i - 1] is '\n' (text is valid UTF-8 and i is
// the start of a character): the character is neither white space (in any engine's sense) nor
// '/', nor an ASCII control character.
bool IsLineStart(std::string_view text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return c > ' ' && c < 0x7F && c != '/';
  return !IsSpaceInAnyEngine(Utf8NextCodePoint(text, &i));
}

// Calls f on consecutive chunks of `text` such that the tokens of the text are the tokens of its
// chunks, one after the other: a cut is made only where both encodings' pre-tokenizers always
// end a piece, whatever comes before or after (their regexes have no look-behind, and the only
// look-ahead, in \s+(?!\S), is never reached across these cuts):
//  - after '\n' when the next character is not white space, '/' or an ASCII control character
//    (IsLineStart): no piece goes on past a line break except over more white space, more line
//    breaks or (o200k) a '/' (a letter piece may start with one non-letter, but never with a
//    line break);
//  - before ' ' between two ASCII letters: a run of letters ends at the space, and the space
//    starts the next word's piece (" word").
// So memoizing chunks is exact, and chunks are short (words, lines) in most texts.
template <typename F>
void ForEachChunk(std::string_view text, F&& f) {
  size_t start = 0;
  for (size_t i = 1; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto before = static_cast<unsigned char>(text[i - 1]);
    bool cut = (before == '\n' && IsLineStart(text, i)) ||
               (c == ' ' && IsAsciiLetter(before) && i + 1 < text.size() &&
                IsAsciiLetter(static_cast<unsigned char>(text[i + 1])));
    if (cut) {
      f(text.substr(start, i - start));
      start = i;
    }
  }
  if (start < text.size()) f(text.substr(start));
}

// Calls f on the lines of `text` as ForEachChunk cuts them (its first rule only): each line is a
// run of whole chunks, so its count is the sum of theirs.
template <typename F>
void ForEachLine(std::string_view text, F&& f) {
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string_view::npos && nl + 1 < text.size();
       nl = text.find('\n', nl + 1)) {
    if (IsLineStart(text, nl + 1)) {
      f(text.substr(start, nl + 1 - start));
      start = nl + 1;
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

void PreloadEncoding(TokenEncoding encoding) { BpeEncoding::Get(encoding); }

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
  // Two levels of memo in one map (a text's count does not depend on where it came from): whole
  // lines first, since a prompt being fitted is re-counted with most of its lines unchanged, and
  // on a miss the line's chunks.
  size_t tokens = 0;
  ForEachLine(text, [&](std::string_view line) {
    if (auto it = memo_.find(line); it != memo_.end()) {
      tokens += it->second;
      return;
    }
    size_t in_line = 0;
    ForEachChunk(line, [&](std::string_view chunk) {
      auto it = memo_.find(chunk);
      size_t n = it != memo_.end() ? it->second : Remember(chunk, bpe.CountValidUtf8(chunk));
      in_line += n;
    });
    tokens += Remember(line, in_line);
  });
  return tokens;
}

size_t TokenCounter::Remember(std::string_view text, size_t tokens) {
  if (memo_bytes_ + text.size() > kMaxMemoBytes) {
    memo_.clear();
    memo_bytes_ = 0;
  }
  if (memo_.emplace(std::string(text), static_cast<uint32_t>(tokens)).second) {
    memo_bytes_ += text.size() + 64;  // the text and about what a map node costs
  }
  return tokens;
}

}  // namespace agentckpt
