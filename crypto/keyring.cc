#include "crypto/keyring.h"

#include <cstring>

#include "common/sha256.h"
#include "crypto/base64.h"

namespace agentckpt::crypto {
namespace {

constexpr char kKeyIdLabel[] = "agentckpt-key-id";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string KeyIdOf(const std::array<uint8_t, kKeyBytes>& bytes) {
  std::string input(kKeyIdLabel);
  input.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return Sha256Hex(input).substr(0, 16);
}

StatusOr<EncryptionKey> ParseKey(std::string_view text) {
  std::string_view t = Trim(text);
  EncryptionKey key;
  if (t.size() == 2 * kKeyBytes) {
    for (size_t i = 0; i < kKeyBytes; ++i) {
      int hi = HexDigit(t[2 * i]);
      int lo = HexDigit(t[2 * i + 1]);
      if (hi < 0 || lo < 0) {
        return InvalidArgumentError("a 64-character key must be hex (0-9, a-f)");
      }
      key.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
  } else if (t.size() == 44) {
    std::optional<std::string> raw = Base64Decode(t);
    if (!raw || raw->size() != kKeyBytes) {
      return InvalidArgumentError("a 44-character key must be standard base64 of 32 bytes");
    }
    std::memcpy(key.bytes.data(), raw->data(), kKeyBytes);
  } else {
    return InvalidArgumentError(
        "expected a 256-bit key as 64 hex characters or 44 base64 "
        "characters, found " +
        std::to_string(t.size()) +
        " characters (e.g. `openssl rand "
        "-hex 32 > key`)");
  }
  key.id = KeyIdOf(key.bytes);
  return key;
}

StatusOr<EncryptionKey> LoadKeyFile(Env* env, const std::string& path) {
  if (path.empty()) return InvalidArgumentError("empty key file path");
  StatusOr<std::string> text = env->ReadFile(path);
  if (!text.ok()) {
    return InvalidArgumentError("cannot read key file \"" + path +
                                "\": " + text.status().message());
  }
  StatusOr<EncryptionKey> key = ParseKey(*text);
  if (!key.ok()) {
    return InvalidArgumentError("key file \"" + path + "\": " + key.status().message());
  }
  return key;
}

Keyring::Keyring(EncryptionKey current, std::vector<EncryptionKey> old_keys)
    : current_(std::move(current)) {
  for (auto& k : old_keys) {
    if (Find(k.id) == nullptr) old_.push_back(std::move(k));
  }
}

const EncryptionKey* Keyring::Find(std::string_view id) const {
  if (current_.id == id) return &current_;
  for (const auto& k : old_) {
    if (k.id == id) return &k;
  }
  return nullptr;
}

std::string Keyring::DescribeIds() const {
  std::string out = current_.id + " (current)";
  for (const auto& k : old_) out += ", " + k.id;
  return out;
}

StatusOr<Keyring> LoadKeyring(Env* env, const std::string& current_path,
                              const std::string& old_paths_csv) {
  StatusOr<EncryptionKey> current = LoadKeyFile(env, current_path);
  if (!current.ok()) {
    return InvalidArgumentError("CKPT_ENCRYPTION_KEY_FILE: " + current.status().message());
  }
  std::vector<EncryptionKey> old;
  size_t start = 0;
  while (start <= old_paths_csv.size() && !old_paths_csv.empty()) {
    size_t comma = old_paths_csv.find(',', start);
    if (comma == std::string::npos) comma = old_paths_csv.size();
    std::string path(Trim(std::string_view(old_paths_csv).substr(start, comma - start)));
    if (!path.empty()) {
      StatusOr<EncryptionKey> key = LoadKeyFile(env, path);
      if (!key.ok()) {
        return InvalidArgumentError("CKPT_ENCRYPTION_OLD_KEY_FILES: " + key.status().message());
      }
      old.push_back(std::move(key).value());
    }
    start = comma + 1;
  }
  return Keyring(std::move(current).value(), std::move(old));
}

}  // namespace agentckpt::crypto
