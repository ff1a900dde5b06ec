// Encryption keys and the keyring (docs/encryption.md).
//
// A key file holds one 256-bit key written as 64 hex characters or as 44 characters of padded
// standard base64; surrounding whitespace (e.g. a final newline) is ignored and anything else is
// refused. A key's id is the first 16 lower-case hex characters of
// SHA-256("agentckpt-key-id" || key): stable, short, and reveals nothing usable about the key.
// The keyring holds the current key (used for every write) and older keys (read only), so keys
// can rotate without re-encrypting what is stored.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/env.h"
#include "common/status.h"

namespace agentckpt::crypto {

inline constexpr size_t kKeyBytes = 32;

struct EncryptionKey {
  std::string id;  // 16 lower-case hex characters
  std::array<uint8_t, kKeyBytes> bytes{};
};

// The key id of `bytes` (see above). Thread-safe.
std::string KeyIdOf(const std::array<uint8_t, kKeyBytes>& bytes);

// Parses the text of a key file. kInvalidArgument (naming neither the key nor its bytes) if it
// is not exactly one key in one of the two accepted forms.
StatusOr<EncryptionKey> ParseKey(std::string_view text);

// Reads and parses a key file through `env`. kInvalidArgument whose message names the path for
// a file that is missing, unreadable or malformed.
StatusOr<EncryptionKey> LoadKeyFile(Env* env, const std::string& path);

// One current key plus older keys. Immutable once built; thread-safe.
class Keyring {
 public:
  // `old_keys` may include the current key or duplicates; they are dropped.
  Keyring(EncryptionKey current, std::vector<EncryptionKey> old_keys);

  const EncryptionKey& current() const { return current_; }
  // The key with `id`, or null if the keyring does not hold it.
  const EncryptionKey* Find(std::string_view id) const;
  // The ids held, current first, e.g. "3f2a... (current), 99b1...".
  std::string DescribeIds() const;

 private:
  EncryptionKey current_;
  std::vector<EncryptionKey> old_;
};

// Loads the current key from `current_path` and the old keys from `old_paths_csv` (comma
// separated paths; empty for none). kInvalidArgument naming the setting and path on any error.
StatusOr<Keyring> LoadKeyring(Env* env, const std::string& current_path,
                              const std::string& old_paths_csv);

}  // namespace agentckpt::crypto
