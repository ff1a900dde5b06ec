// SHA-256 through OpenSSL's EVP interface.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace agentckpt {

// Returns the lower-case hex SHA-256 of `data` (64 characters). Thread-safe. Aborts only if
// OpenSSL cannot allocate a digest context (a broken invariant).
std::string Sha256Hex(std::string_view data);

// Returns the lower-case hex SHA-256 of the parts one after the other: the same digest as
// Sha256Hex of their concatenation, without building it. Thread-safe; aborts as Sha256Hex.
std::string Sha256HexOfParts(std::initializer_list<std::string_view> parts);

// True if `s` is 64 lower-case hex characters.
bool IsSha256Hex(std::string_view s);

}  // namespace agentckpt
