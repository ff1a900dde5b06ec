#include "restore/untrusted_fence.h"

#include "common/utf8.h"

namespace agentckpt {
namespace {

// Appends `c`, first putting a space in any run of three equal angle brackets.
void AppendBreakingRuns(std::string* out, char c) {
  if ((c == '<' || c == '>') && out->size() >= 2 && out->back() == c &&
      (*out)[out->size() - 2] == c) {
    out->push_back(' ');
  }
  out->push_back(c);
}

}  // namespace

std::string NeutraliseUntrusted(std::string_view s, bool single_line) {
  std::string valid = Utf8Sanitize(s);
  std::string out;
  out.reserve(valid.size() + valid.size() / 8);
  static constexpr char kHex[] = "0123456789abcdef";
  for (char ch : valid) {
    unsigned char c = static_cast<unsigned char>(ch);
    bool allowed_space = !single_line && (c == '\n' || c == '\t');
    if ((c < 0x20 && !allowed_space) || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
      continue;
    }
    AppendBreakingRuns(&out, ch);
  }
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
