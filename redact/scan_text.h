// Internal to redact/: the character classes and search loops the built-in scanners share.
// Pure functions on the scanned text; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace agentckpt::redact_internal {

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
inline bool IsAlpha(char c) { return IsUpper(c) || IsLower(c); }
inline bool IsAlnum(char c) { return IsAlpha(c) || IsDigit(c); }
inline bool IsUpperAlnum(char c) { return IsUpper(c) || IsDigit(c); }
inline bool IsB64Url(char c) { return IsAlnum(c) || c == '_' || c == '-'; }
inline bool IsAlnumUnderscore(char c) { return IsAlnum(c) || c == '_'; }
inline bool IsAlnumDash(char c) { return IsAlnum(c) || c == '-'; }
inline bool IsIdent(char c) { return IsAlnum(c) || c == '_' || c == '-' || c == '.'; }
inline bool IsTokenChar(char c) {  // RFC 6750 b64token plus '.' and '~'
  return IsAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
         c == '=';
}
inline bool IsPemBody(char c) {
  return IsAlnum(c) || c == '+' || c == '/' || c == '=' || c == '\n' || c == '\r' || c == '\\';
}

template <typename Pred>
size_t RunEnd(std::string_view s, size_t pos, Pred pred) {
  while (pos < s.size() && pred(s[pos])) ++pos;
  return pos;
}

template <typename Pred>
bool LeftBoundary(std::string_view s, size_t pos, Pred part_of_word) {
  return pos == 0 || !part_of_word(s[pos - 1]);
}

// Calls fn(pos) for every occurrence of `needle` in `hay`.
template <typename Fn>
void ForEach(std::string_view hay, std::string_view needle, Fn fn) {
  for (size_t pos = hay.find(needle); pos != std::string_view::npos;
       pos = hay.find(needle, pos + 1)) {
    fn(pos);
  }
}

inline bool HasDigitAndLetter(std::string_view s) {
  bool digit = false, letter = false;
  for (char c : s) {
    digit = digit || IsDigit(c);
    letter = letter || IsAlpha(c);
  }
  return digit && letter;
}

}  // namespace agentckpt::redact_internal
