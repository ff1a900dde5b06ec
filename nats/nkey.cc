#include "nats/nkey.h"

#include <openssl/evp.h>

#include <cctype>
#include <memory>
#include <vector>

namespace agentckpt {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
constexpr uint8_t kSeedPrefix = 18 << 3;  // 'S'

uint16_t Crc16Xmodem(const uint8_t* data, size_t n) {
  uint16_t crc = 0;
  for (size_t i = 0; i < n; ++i) {
    crc ^= static_cast<uint16_t>(data[i]) << 8;
    for (int b = 0; b < 8; ++b) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc;
}

std::string Base32Encode(const std::vector<uint8_t>& in) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (uint8_t byte : in) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += kAlphabet[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += kAlphabet[(buffer << (5 - bits)) & 31];
  return out;
}

bool Base32Decode(std::string_view in, std::vector<uint8_t>* out) {
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : in) {
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    if (c >= '2' && c <= '7') v = c - '2' + 26;
    if (v < 0) return false;
    buffer = (buffer << 5) | static_cast<uint32_t>(v);
    bits += 5;
    if (bits >= 8) {
      out->push_back(static_cast<uint8_t>(buffer >> (bits - 8)));
      bits -= 8;
    }
  }
  return true;
}

std::vector<uint8_t> WithCrc(std::vector<uint8_t> v) {
  uint16_t crc = Crc16Xmodem(v.data(), v.size());
  v.push_back(static_cast<uint8_t>(crc & 0xff));
  v.push_back(static_cast<uint8_t>(crc >> 8));
  return v;
}

}  // namespace

std::string EncodeNKeySeed(uint8_t public_prefix, std::string_view raw_seed) {
  std::vector<uint8_t> v = {static_cast<uint8_t>(kSeedPrefix | (public_prefix >> 5)),
                            static_cast<uint8_t>((public_prefix & 31) << 3)};
  v.insert(v.end(), raw_seed.begin(), raw_seed.end());
  return Base32Encode(WithCrc(std::move(v)));
}

StatusOr<std::string> NKeyPublicFromSeedText(std::string_view text) {
  std::string_view seed;
  size_t i = 0;
  while (i < text.size() && seed.empty()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view token = text.substr(start, i - start);
    if (token.size() == 58 && token[0] == 'S') seed = token;
  }
  if (seed.empty()) return InvalidArgumentError("no NKey seed (a 58-character S... token)");
  std::vector<uint8_t> raw;
  if (!Base32Decode(seed, &raw) || raw.size() != 36) {
    return InvalidArgumentError("the NKey seed is not valid base32");
  }
  uint16_t crc = static_cast<uint16_t>(raw[34] | (raw[35] << 8));
  if (Crc16Xmodem(raw.data(), 34) != crc) {
    return InvalidArgumentError("the NKey seed's checksum does not match");
  }
  if ((raw[0] & 0xf8) != kSeedPrefix) return InvalidArgumentError("not an NKey seed");
  uint8_t public_prefix = static_cast<uint8_t>(((raw[0] & 7) << 5) | (raw[1] >> 3));
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, raw.data() + 2, 32), &EVP_PKEY_free);
  uint8_t pub[32];
  size_t pub_len = sizeof(pub);
  if (!key || EVP_PKEY_get_raw_public_key(key.get(), pub, &pub_len) != 1 || pub_len != 32) {
    return InvalidArgumentError("the NKey seed is not a valid Ed25519 seed");
  }
  std::vector<uint8_t> out = {public_prefix};
  out.insert(out.end(), pub, pub + 32);
  return Base32Encode(WithCrc(std::move(out)));
}

}  // namespace agentckpt
