// NATS NKeys: the user public key that belongs to a seed, so NATS_NKEY_SEED alone is enough.
// Format (as NATS tooling writes it): base32 (RFC 4648, no padding) of a 2-byte prefix, the raw
// 32-byte Ed25519 seed and a CRC-16/XMODEM (little-endian); public keys are a 1-byte prefix,
// the 32-byte Ed25519 public key and the CRC. Thread-safe, no state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace agentckpt {

inline constexpr uint8_t kNKeyUserPrefix = 20 << 3;      // public keys starting with 'U'
inline constexpr uint8_t kNKeyAccountPrefix = 0;         // 'A'
inline constexpr uint8_t kNKeyOperatorPrefix = 14 << 3;  // 'O'

// The public key ("U...") of the seed ("SU...") in `text`: the first whitespace-separated token
// that looks like a seed (e.g. the contents of a seed file, possibly inside a decorated block).
// kInvalidArgument if there is none or it is damaged (bad base32, bad checksum).
StatusOr<std::string> NKeyPublicFromSeedText(std::string_view text);

// Encodes a raw 32-byte Ed25519 seed as an NKey seed of the given public prefix.
std::string EncodeNKeySeed(uint8_t public_prefix, std::string_view raw_seed);

}  // namespace agentckpt
