// SHA-256 through OpenSSL's EVP interface.
#pragma once

#include <string>
#include <string_view>

namespace agentckpt {

// Returns the lower-case hex SHA-256 of `data` (64 characters). Thread-safe. Aborts only if
// OpenSSL cannot allocate a digest context (a broken invariant).
std::string Sha256Hex(std::string_view data);

// True if `s` is 64 lower-case hex characters.
bool IsSha256Hex(std::string_view s);

}  // namespace agentckpt
