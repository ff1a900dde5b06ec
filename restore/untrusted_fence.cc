#include "restore/untrusted_fence.h"

#include <cstdint>

#include "common/utf8.h"

namespace agentckpt {
namespace {

// Which way a character points, if it is an angle bracket or one of its look-alikes.
enum class Angle { kNone, kLeft, kRight };

Angle AngleOf(uint32_t cp) {
  switch (cp) {
    case '<':
    case 0xFF1C:  // FULLWIDTH LESS-THAN SIGN
    case 0xFE64:  // SMALL LESS-THAN SIGN
    case 0x2039:  // SINGLE LEFT-POINTING ANGLE QUOTATION MARK
    case 0x3008:  // LEFT ANGLE BRACKET
    case 0x2329:  // LEFT-POINTING ANGLE BRACKET
    case 0x27E8:  // MATHEMATICAL LEFT ANGLE BRACKET
    case 0x1438:  // CANADIAN SYLLABICS PA
      return Angle::kLeft;
    case '>':
    case 0xFF1E:
    case 0xFE65:
    case 0x203A:
    case 0x3009:
    case 0x232A:
    case 0x27E9:
    case 0x1433:  // CANADIAN SYLLABICS PO
      return Angle::kRight;
    default:
      return Angle::kNone;
  }
}

// Characters that are invisible or change how the text around them is shown: zero-width
// characters, bidirectional controls, line/paragraph separators, C1 controls (NEL), BOM.
bool IsInvisibleOrLayout(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0xAD || cp == 0x34F || cp == 0x61C || cp == 0x180E ||
         (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB);
}

constexpr char kHex[] = "0123456789abcdef";

}  // namespace

std::string NeutraliseUntrusted(std::string_view s, bool single_line) {
  std::string repaired;
  std::string_view valid = s;
  if (!IsValidUtf8(s)) {
    repaired = Utf8Sanitize(s);
    valid = repaired;
  }
  std::string out;
  out.reserve(valid.size() + valid.size() / 8);
  // Characters that stay as they are, are copied in runs: valid[copied, i) is pending.
  size_t copied = 0;
  auto replace = [&](size_t start, size_t end) {
    out.append(valid.substr(copied, start - copied));
    copied = end;
  };
  Angle run_angle = Angle::kNone;
  int run_length = 0;
  for (size_t i = 0; i < valid.size();) {
    const auto c = static_cast<unsigned char>(valid[i]);
    if (c >= 0x20 && c < 0x7f && c != '<' && c != '>') {  // printable ASCII, not a bracket
      ++i;
      run_angle = Angle::kNone;
      run_length = 1;
      continue;
    }
    size_t start = i;
    uint32_t cp = Utf8NextCodePoint(valid, &i);
    bool allowed_space = !single_line && (cp == '\n' || cp == '\t');
    if ((cp < 0x20 && !allowed_space) || cp == 0x7f) {
      replace(start, i);
      out += "\\x";
      out += kHex[cp >> 4];
      out += kHex[cp & 0xf];
      run_length = 0;
      continue;
    }
    if (IsInvisibleOrLayout(cp)) {
      replace(start, i);
      out += "\\u{";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xf];
      out += "}";
      run_length = 0;
      continue;
    }
    Angle angle = AngleOf(cp);
    if (angle != Angle::kNone && angle == run_angle && run_length == 2) {
      replace(start, start);
      out.push_back(' ');  // no run of three brackets pointing the same way
      run_length = 0;
    }
    run_length = angle != Angle::kNone && angle == run_angle ? run_length + 1 : 1;
    run_angle = angle;
  }
  replace(valid.size(), valid.size());
  return out;
}

std::string FenceUntrusted(std::string_view nonce, std::string_view attributes,
                           std::string_view body) {
  std::string safe_nonce = NeutraliseUntrusted(nonce, true);
  std::string out = "<<<BEGIN UNTRUSTED DATA " + safe_nonce;
  if (!attributes.empty()) out += " " + NeutraliseUntrusted(attributes, true);
  out += ">>>\n";
  std::string safe = NeutraliseUntrusted(body, false);
  size_t start = 0;
  while (start <= safe.size()) {
    size_t nl = safe.find('\n', start);
    size_t end = nl == std::string::npos ? safe.size() : nl;
    if (nl == std::string::npos && start == safe.size() && start > 0) break;  // trailing '\n'
    out += "| ";
    out.append(safe, start, end - start);
    out += '\n';
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  out += "<<<END UNTRUSTED DATA " + safe_nonce + ">>>\n";
  return out;
}

}  // namespace agentckpt
