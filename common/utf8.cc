#include "common/utf8.h"

#include <cstdint>
#include <cstring>

namespace agentckpt {
namespace {

// Length of the well-formed sequence at s[i], or 0 if ill-formed.
size_t SeqLen(std::string_view s, size_t i) {
  auto u = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t c = u(i);
  if (c < 0x80) return 1;
  size_t n;
  uint8_t lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (u(i + 1) < lo || u(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (u(i + k) < 0x80 || u(i + k) > 0xbf) return 0;
  }
  return n;
}

// The index of the first ill-formed sequence in `s` at or after `from` (s.size() if none).
size_t FirstIllFormed(std::string_view s, size_t from) {
  for (size_t i = from; i < s.size();) {
    // ASCII fast path, eight bytes at a time.
    if (i + 8 <= s.size()) {
      uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    size_t n = SeqLen(s, i);
    if (n == 0) return i;
    i += n;
  }
  return s.size();
}

}  // namespace

bool IsValidUtf8(std::string_view s) { return FirstIllFormed(s, 0) == s.size(); }

size_t Utf8Length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

std::string_view Utf8TruncateChars(std::string_view s, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) {
      if (chars == max_chars) return s.substr(0, i);
      ++chars;
    }
  }
  return s;
}

std::string_view Utf8TruncateBytes(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xc0) == 0x80) --end;
  return s.substr(0, end);
}

uint32_t Utf8NextCodePoint(std::string_view s, size_t* i) {
  const auto c = static_cast<unsigned char>(s[*i]);
  const int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[*i + k]) & 0x3F);
  *i += static_cast<size_t>(len);
  return cp;
}

std::string Utf8Sanitize(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t done = 0;  // s[0, done) is in `out`
  for (size_t bad = FirstIllFormed(s, 0); bad < s.size(); bad = FirstIllFormed(s, done)) {
    out.append(s.substr(done, bad - done));
    out += "\xEF\xBF\xBD";
    done = bad + 1;
  }
  out.append(s.substr(done));
  return out;
}

}  // namespace agentckpt
