#include "common/json_string.h"

#include <array>
#include <cstdint>

#include "common/utf8.h"

namespace agentckpt {
namespace {

// For each byte: 0 = copied as it is, 'u' = \u00xx, otherwise the letter after the backslash.
constexpr std::array<char, 256> EscapeTable() {
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
constexpr std::array<char, 256> kEscape = EscapeTable();

}  // namespace

bool AppendJsonString(std::string_view s, std::string* out) {
  if (!IsValidUtf8(s)) return false;
  out->push_back('"');
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const char e = kEscape[static_cast<uint8_t>(s[i])];
    if (e == 0) continue;
    out->append(s.data() + run, i - run);
    run = i + 1;
    out->push_back('\\');
    if (e != 'u') {
      out->push_back(e);
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    const auto c = static_cast<uint8_t>(s[i]);
    out->append("u00");
    out->push_back(kHex[c >> 4]);
    out->push_back(kHex[c & 0xf]);
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
  return true;
}

}  // namespace agentckpt
