// Standard base64 (RFC 4648 section 4, with '=' padding), strict on decoding.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace agentckpt::crypto {

// Encodes `data` as padded standard base64. Thread-safe.
std::string Base64Encode(std::string_view data);

// Decodes padded standard base64. nullopt if the length is not a multiple of 4, a character is
// outside the alphabet, padding is misplaced, or the unused bits of the last group are not zero
// (so every byte string has exactly one accepted encoding). Thread-safe.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace agentckpt::crypto
