#include "common/json_string.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "common/utf8.h"

namespace agentckpt {
namespace {

// Whether any of the 8 bytes at `p` is below 0x20, '"' or '\\' (the bytes that are escaped), by
// the word-at-a-time tests for a zero byte and for a byte below n (bytes of 0x80 and above are
// text and never match).
bool NeedsEscape8(const char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  uint64_t x;
  std::memcpy(&x, p, sizeof(x));
  const uint64_t quote = x ^ (kOnes * '"');
  const uint64_t backslash = x ^ (kOnes * '\\');
  const uint64_t below_space = (x - kOnes * 0x20) & ~x;
  const uint64_t zero_quote = (quote - kOnes) & ~quote;
  const uint64_t zero_backslash = (backslash - kOnes) & ~backslash;
  return ((below_space | zero_quote | zero_backslash) & kHighs) != 0;
}

// For each byte: 0 = copied as it is, 'u' = \u00xx, otherwise the letter after the backslash.
constexpr std::array<char, 256> EscapeLetters() {
  std::array<char, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = 'u';
  t['\b'] = 'b';
  t['\t'] = 't';
  t['\n'] = 'n';
  t['\f'] = 'f';
  t['\r'] = 'r';
  t['"'] = '"';
  t['\\'] = '\\';
  return t;
}
constexpr std::array<char, 256> kEscapeLetter = EscapeLetters();

}  // namespace

void AppendJsonStringUnchecked(std::string_view s, std::string* out) {
  out->push_back('"');
  const char* p = s.data();
  const char* end = p + s.size();
  const char* run = p;  // the start of the bytes not yet copied
  for (; p < end; ++p) {
    // Eight bytes at a time while none of them needs escaping (most text never does).
    while (end - p >= 8 && !NeedsEscape8(p)) p += 8;
    if (p == end) break;
    const auto c = static_cast<unsigned char>(*p);
    const char letter = kEscapeLetter[c];
    if (letter == 0) continue;
    out->append(run, static_cast<size_t>(p - run));
    run = p + 1;
    if (letter != 'u') {
      const char escaped[2] = {'\\', letter};
      out->append(escaped, sizeof(escaped));
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      const char escaped[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
      out->append(escaped, sizeof(escaped));
    }
  }
  out->append(run, static_cast<size_t>(end - run));
  out->push_back('"');
}

bool AppendJsonString(std::string_view s, std::string* out) {
  if (!IsValidUtf8(s)) return false;
  AppendJsonStringUnchecked(s, out);
  return true;
}

}  // namespace agentckpt
