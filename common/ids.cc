#include "common/ids.h"

#include <cstdint>

namespace agentckpt {

StatusOr<std::string> NewUuidV4(Env* env) {
  uint8_t b[16];
  Status s = env->RandomBytes(b, sizeof(b));
  if (!s.ok()) return s;
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[b[i] >> 4]);
    out.push_back(kHex[b[i] & 0xf]);
  }
  return out;
}

bool IsUuidV4(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  if (s[14] != '4') return false;
  char v = s[19];
  return v == '8' || v == '9' || v == 'a' || v == 'b' || v == 'A' || v == 'B';
}

Status ValidateAgentId(std::string_view id) {
  if (id.empty()) return InvalidArgumentError("agentId is empty");
  if (id.size() > 128) return InvalidArgumentError("agentId is longer than 128 characters");
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) {
      return InvalidArgumentError("agentId \"" + std::string(id.substr(0, 64)) +
                                  "\" may only hold letters, digits, '-' and '_'");
    }
  }
  return OkStatus();
}

}  // namespace agentckpt
