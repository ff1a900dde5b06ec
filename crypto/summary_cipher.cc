#include "crypto/summary_cipher.h"

#include <openssl/evp.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_json.h"
#include "common/json_member.h"
#include "common/status_macros.h"
#include "crypto/base64.h"

namespace agentckpt::crypto {
namespace {

constexpr char kAlg[] = "A256GCM";
constexpr int kNonceBytes = 12;
constexpr int kTagBytes = 16;

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CtxPtr = std::unique_ptr<EVP_CIPHER_CTX, CtxFree>;

// Everything the ciphertext is bound to, unambiguous because no part can hold a newline
// (ids are validated, the hash is hex).
std::string Aad(const Checkpoint& cp, const std::string& key_id,
                const std::string& plaintext_sha256) {
  return std::string("agentckpt-context-summary\n") + kAlg + "\n" + key_id + "\n" + cp.agent_id +
         "\n" + cp.checkpoint_id + "\n" + std::to_string(cp.sequence_number) + "\n" +
         plaintext_sha256;
}

const unsigned char* U(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// AES-256-GCM; `out` receives ciphertext || tag. False on any OpenSSL failure.
bool Seal256Gcm(const EncryptionKey& key, const std::string& nonce, const std::string& aad,
                const std::string& plaintext, std::string* out) {
  CtxPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx) return false;
  int len = 0;
  out->assign(plaintext.size() + kTagBytes, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out->data());
  if (EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) != 1 ||
      EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, key.bytes.data(), U(nonce)) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &len, U(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), o, &len, U(plaintext), static_cast<int>(plaintext.size())) !=
          1) {
    return false;
  }
  int total = len;
  if (EVP_EncryptFinal_ex(ctx.get(), o + total, &len) != 1) return false;
  total += len;
  if (static_cast<size_t>(total) != plaintext.size()) return false;
  return EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, o + total) == 1;
}

// The inverse; false if the tag does not verify (or OpenSSL fails).
bool Open256Gcm(const EncryptionKey& key, const std::string& nonce, const std::string& aad,
                const std::string& sealed, std::string* plaintext) {
  if (sealed.size() < static_cast<size_t>(kTagBytes)) return false;
  size_t n = sealed.size() - kTagBytes;
  CtxPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx) return false;
  plaintext->assign(n, '\0');
  auto* p = reinterpret_cast<unsigned char*>(plaintext->data());
  std::string tag = sealed.substr(n);
  int len = 0;
  if (EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) != 1 ||
      EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, key.bytes.data(), U(nonce)) != 1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &len, U(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), p, &len, U(sealed), static_cast<int>(n)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) != 1) {
    return false;
  }
  int total = len;
  if (EVP_DecryptFinal_ex(ctx.get(), p + total, &len) != 1) return false;
  return static_cast<size_t>(total + len) == n;
}

Status DecryptionFailed(const Checkpoint& cp, const std::string& why) {
  return DataLossError("decryption failed: " + why + " (checkpoint " + cp.checkpoint_id +
                       ", sequence " + std::to_string(cp.sequence_number) + ")");
}

}  // namespace

StatusOr<SealedCheckpoint> EncryptCheckpoint(const SealedCheckpoint& plain,
                                             const EncryptionKey& key, Env* env) {
  const Checkpoint& doc = plain.doc;
  if (doc.encrypted_context_summary ||
      (doc.schema_version != kSchemaVersion && doc.schema_version != kLedgerlessSchemaVersion)) {
    return InvalidArgumentError("encryptedContextSummary: the checkpoint is already encrypted");
  }
  if (doc.content_sha256.empty()) {
    return InvalidArgumentError("contentSha256: the checkpoint is not sealed");
  }
  std::string summary;
  try {
    summary = ContextSummaryToJsonValue(doc.context_summary)
                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("contextSummary: cannot serialise: ") + e.what());
  }
  std::string nonce(kNonceBytes, '\0');
  RETURN_IF_ERROR(env->RandomBytes(reinterpret_cast<uint8_t*>(nonce.data()), nonce.size()));
  std::string sealed;
  if (!Seal256Gcm(key, nonce, Aad(doc, key.id, doc.content_sha256), summary, &sealed)) {
    return InternalError("AES-256-GCM encryption failed in OpenSSL");
  }
  Checkpoint stored = doc;
  stored.schema_version = kEncryptedSchemaVersion;
  stored.context_summary = ContextSummary{};
  stored.encrypted_context_summary = EncryptedContextSummary{
      kAlg, key.id, Base64Encode(nonce), Base64Encode(sealed), doc.content_sha256, doc.size_bytes};
  return Seal(std::move(stored));
}

StatusOr<Checkpoint> DecryptCheckpoint(const Checkpoint& stored, const Keyring* keyring) {
  if (!stored.encrypted_context_summary) return stored;
  const EncryptedContextSummary& e = *stored.encrypted_context_summary;
  if (e.alg != kAlg) return DecryptionFailed(stored, "unknown algorithm \"" + e.alg + "\"");
  if (keyring == nullptr) {
    return DecryptionFailed(stored, "the summary is encrypted with key id " + e.key_id +
                                        " but no encryption key is configured "
                                        "(CKPT_ENCRYPTION_KEY_FILE)");
  }
  const EncryptionKey* key = keyring->Find(e.key_id);
  if (key == nullptr) {
    return DecryptionFailed(stored, "key id " + e.key_id + " is not in the keyring (holds " +
                                        keyring->DescribeIds() + ")");
  }
  std::optional<std::string> nonce = Base64Decode(e.nonce);
  std::optional<std::string> sealed = Base64Decode(e.ciphertext);
  if (!nonce || nonce->size() != kNonceBytes || !sealed) {
    return DecryptionFailed(stored, "malformed nonce or ciphertext");
  }
  std::string summary;
  if (!Open256Gcm(*key, *nonce, Aad(stored, e.key_id, e.plaintext_sha256), *sealed, &summary)) {
    return DecryptionFailed(stored, "authentication failed with key id " + e.key_id +
                                        " (wrong key, or the ciphertext, nonce or the fields "
                                        "it is bound to were changed)");
  }
  nlohmann::json j = nlohmann::json::parse(summary, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return DecryptionFailed(stored, "the plaintext is not JSON");
  StatusOr<ContextSummary> c = ContextSummaryFromJsonValue(j, "contextSummary");
  if (!c.ok())
    return DecryptionFailed(stored, "the plaintext does not decode: " + c.status().message());
  Checkpoint plain = stored;
  plain.schema_version = kSchemaVersion;
  plain.encrypted_context_summary.reset();
  plain.context_summary = std::move(c).value();
  StatusOr<SealedCheckpoint> resealed = Seal(plain);
  if (resealed.ok() && !plain.ledger && resealed->doc.content_sha256 != e.plaintext_sha256) {
    // Encrypted from a version 1 plaintext (no ledger): its hash covers schemaVersion 1.
    plain.schema_version = kLedgerlessSchemaVersion;
    resealed = Seal(std::move(plain));
  }
  if (!resealed.ok()) {
    return DecryptionFailed(stored,
                            "the plaintext breaks the schema: " + resealed.status().message());
  }
  if (resealed->doc.content_sha256 != e.plaintext_sha256 ||
      resealed->doc.size_bytes != e.plaintext_size_bytes) {
    return DecryptionFailed(stored,
                            "the plaintext does not match plaintextSha256 and plaintextSizeBytes");
  }
  return std::move(resealed->doc);
}

namespace {

constexpr char kJournalEnvelope[] = "agentckptEncrypted";

std::string JournalAad(const JournalEntry& e, const std::string& key_id) {
  return std::string("agentckpt-journal-payload\n") + kAlg + "\n" + key_id + "\n" + e.agent_id +
         "\n" + std::to_string(e.sequence) + "\n" + e.sha256;
}

}  // namespace

StatusOr<JournalEntry> EncryptJournalEntry(const JournalEntry& plain, const EncryptionKey& key,
                                           Env* env) {
  std::string nonce(kNonceBytes, '\0');
  RETURN_IF_ERROR(env->RandomBytes(reinterpret_cast<uint8_t*>(nonce.data()), nonce.size()));
  std::string sealed;
  if (!Seal256Gcm(key, nonce, JournalAad(plain, key.id), plain.payload, &sealed)) {
    return InternalError("AES-256-GCM encryption failed in OpenSSL");
  }
  JournalEntry stored = plain;
  nlohmann::json env_json = {{kJournalEnvelope,
                              {{"alg", kAlg},
                               {"keyId", key.id},
                               {"nonce", Base64Encode(nonce)},
                               {"ciphertext", Base64Encode(sealed)}}}};
  stored.payload = env_json.dump();
  return stored;
}

bool IsEncryptedJournalEntry(const JournalEntry& e) {
  return e.payload.rfind(std::string("{\"") + kJournalEnvelope + "\"", 0) == 0;
}

StatusOr<JournalEntry> DecryptJournalEntry(const JournalEntry& stored, const Keyring* keyring) {
  if (!IsEncryptedJournalEntry(stored)) return stored;
  auto failed = [&](const std::string& why) {
    return DataLossError("decryption failed: " + why + " (journal entry " +
                         std::to_string(stored.sequence) + ")");
  };
  nlohmann::json j = nlohmann::json::parse(stored.payload, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains(kJournalEnvelope)) {
    return failed("malformed envelope");
  }
  const nlohmann::json& e = j[kJournalEnvelope];
  if (!e.is_object() || JsonMemberOr(e, "alg", std::string()) != kAlg)
    return failed("unknown algorithm");
  std::string key_id = JsonMemberOr(e, "keyId", std::string());
  if (keyring == nullptr) {
    return failed("the payload is encrypted with key id " + key_id +
                  " but no encryption key is configured (CKPT_ENCRYPTION_KEY_FILE)");
  }
  const EncryptionKey* key = keyring->Find(key_id);
  if (key == nullptr) return failed("key id " + key_id + " is not in the keyring");
  std::optional<std::string> nonce = Base64Decode(JsonMemberOr(e, "nonce", std::string()));
  std::optional<std::string> sealed = Base64Decode(JsonMemberOr(e, "ciphertext", std::string()));
  if (!nonce || nonce->size() != kNonceBytes || !sealed) return failed("malformed nonce");
  JournalEntry plain = stored;
  if (!Open256Gcm(*key, *nonce, JournalAad(stored, key_id), *sealed, &plain.payload)) {
    return failed("authentication failed with key id " + key_id);
  }
  return plain;
}

}  // namespace agentckpt::crypto
