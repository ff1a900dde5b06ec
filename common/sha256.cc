#include "common/sha256.h"

#include <openssl/evp.h>

#include <array>
#include <cstdio>
#include <cstdlib>

namespace agentckpt {

namespace {

// OpenSSL 3 looks the algorithm up in its provider tables on every EVP_sha256() init (an implicit
// fetch, a few microseconds under a lock); fetching it once and keeping it avoids that on every
// hash of the request path. The fetched object lives for the process (thread-safe to share).
const EVP_MD* Sha256Md() {
  static const EVP_MD* md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched != nullptr ? fetched : EVP_sha256();
  }();
  return md;
}

}  // namespace

std::string Sha256HexOfParts(std::initializer_list<std::string_view> parts) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, Sha256Md(), nullptr) == 1;
  for (std::string_view part : parts) {
    ok = ok && EVP_DigestUpdate(ctx, part.data(), part.size()) == 1;
  }
  if (!ok || EVP_DigestFinal_ex(ctx, digest, &len) != 1) {
    std::fprintf(stderr, "agentckpt: broken invariant: OpenSSL SHA-256 failed\n");
    std::abort();
  }
  EVP_MD_CTX_free(ctx);
  static const char kHex[] = "0123456789abcdef";
  std::string out(len * 2, '0');
  for (unsigned int i = 0; i < len; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return out;
}

std::string Sha256Hex(std::string_view data) { return Sha256HexOfParts({data}); }

namespace {

constexpr std::array<bool, 256> LowerHexTable() {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'f'; ++c) t[c] = true;
  return t;
}
constexpr std::array<bool, 256> kLowerHex = LowerHexTable();

}  // namespace

// Restore checks two hashes per journal entry. A branch per character mispredicted on random hex
// (digits and letters mixed) and cost about 0.4 us per hash, a tenth of a 1,000-entry restore; a
// table lookup with no early exit has no data-dependent branch.
bool IsSha256Hex(std::string_view s) {
  if (s.size() != 64) return false;
  bool ok = true;
  for (char c : s) ok &= kLowerHex[static_cast<unsigned char>(c)];
  return ok;
}

}  // namespace agentckpt
