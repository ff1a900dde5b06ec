#include "http/http_handler.h"

#include <openssl/crypto.h>

#include "common/sha256.h"

namespace agentckpt {

BearerAuth::BearerAuth(const std::string& token) {
  if (!token.empty()) digest_ = Sha256Hex(token);
}

bool BearerAuth::Allows(std::string_view header) const {
  if (digest_.empty()) return true;
  static constexpr std::string_view kScheme = "bearer ";
  if (header.size() <= kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    char c = header[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kScheme[i]) return false;
  }
  std::string_view token = header.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  // Digests of equal length, compared in constant time: the time taken tells nothing about
  // how much of the token was right.
  std::string digest = Sha256Hex(token);
  return CRYPTO_memcmp(digest.data(), digest_.data(), digest.size()) == 0;
}

}  // namespace agentckpt
