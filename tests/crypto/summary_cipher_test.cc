// AES-256-GCM encryption of the context summary and the stored form (schema version 2).
#include "crypto/summary_cipher.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_json.h"
#include "common/fake_env.h"
#include "crypto/base64.h"
#include "tests/crypto/crypto_test_util.h"

namespace agentckpt::testing {
namespace {

using crypto::DecryptCheckpoint;
using crypto::EncryptCheckpoint;
using crypto::Keyring;

class SummaryCipherTest : public ::testing::Test {
 protected:
  SealedCheckpoint Encrypt(const SealedCheckpoint& plain) {
    auto stored = EncryptCheckpoint(plain, KeyFromSeed('a'), &env_);
    EXPECT_TRUE(stored.ok()) << stored.status().ToString();
    return *stored;
  }
  // Re-seals a changed stored document, as a store-level writer with no key could.
  static Checkpoint Reseal(Checkpoint stored) {
    auto s = Seal(std::move(stored));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s->doc;
  }

  FakeEnv env_;
  Keyring ring_{KeyFromSeed('a'), {}};
};

TEST_F(SummaryCipherTest, RoundTripRestoresThePlaintextAndItsHash) {
  Checkpoint fixture = LoadFixtureCheckpoint("checkpoint-16k.json");
  auto plain = Seal(fixture);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  SealedCheckpoint stored = Encrypt(*plain);
  EXPECT_EQ(stored.doc.schema_version, kEncryptedSchemaVersion);
  EXPECT_EQ(stored.doc.context_summary, ContextSummary{});
  ASSERT_TRUE(stored.doc.encrypted_context_summary.has_value());
  EXPECT_EQ(stored.doc.encrypted_context_summary->plaintext_sha256, plain->doc.content_sha256);
  EXPECT_EQ(stored.doc.encrypted_context_summary->key_id, KeyFromSeed('a').id);
  EXPECT_NE(stored.doc.content_sha256, plain->doc.content_sha256);

  auto back = DecryptCheckpoint(stored.doc, &ring_);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, plain->doc);
  EXPECT_EQ(CanonicalJson(*back), plain->canonical);
}

TEST_F(SummaryCipherTest, StoredFormIsCanonicalVerifiableAndFreeOfPlaintext) {
  SealedCheckpoint plain = SealedWithMarker("agent-c", 3);
  SealedCheckpoint stored = Encrypt(plain);
  // The hand-written canonical writer agrees with nlohmann's sorted compact dump.
  EXPECT_EQ(stored.canonical, CheckpointToJsonValue(stored.doc, false).dump());
  EXPECT_EQ(stored.canonical.find(kSecretMarker), std::string::npos);
  EXPECT_EQ(stored.canonical.find("contextSummary"), std::string::npos);
  EXPECT_EQ(static_cast<size_t>(stored.doc.size_bytes), FullDocumentJson(stored).size());
  // Stores verify it like any document: through the canonical bytes or the full JSON.
  auto opened = OpenSealed(stored.canonical, stored.doc.content_sha256);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(*opened, stored.doc);
  auto verified = VerifyDocumentJson(FullDocumentJson(stored));
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  EXPECT_EQ(*verified, stored.doc);
}

TEST_F(SummaryCipherTest, EveryEncryptionUsesAFreshNonce) {
  SealedCheckpoint plain = SealedWithMarker("agent-c", 3);
  SealedCheckpoint a = Encrypt(plain);
  SealedCheckpoint b = Encrypt(plain);
  EXPECT_NE(a.doc.encrypted_context_summary->nonce, b.doc.encrypted_context_summary->nonce);
  EXPECT_NE(a.doc.encrypted_context_summary->ciphertext,
            b.doc.encrypted_context_summary->ciphertext);
  EXPECT_EQ(crypto::Base64Decode(a.doc.encrypted_context_summary->nonce)->size(), 12u);
}

TEST_F(SummaryCipherTest, PlaintextDocumentsPassThrough) {
  SealedCheckpoint plain = SealedWithMarker("agent-c", 3);
  auto back = DecryptCheckpoint(plain.doc, nullptr);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, plain.doc);
}

void ExpectDecryptionFailure(const StatusOr<Checkpoint>& got, const std::string& fragment) {
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(got.status().message().rfind("decryption failed: ", 0), 0u) << got.status().message();
  EXPECT_NE(got.status().message().find(fragment), std::string::npos) << got.status().message();
}

TEST_F(SummaryCipherTest, AnyChangedCiphertextByteFailsAuthentication) {
  SealedCheckpoint stored = Encrypt(SealedWithMarker("agent-c", 3));
  std::string raw = *crypto::Base64Decode(stored.doc.encrypted_context_summary->ciphertext);
  for (size_t i = 0; i < raw.size(); i += std::max<size_t>(1, raw.size() / 97)) {
    std::string changed = raw;
    changed[i] = static_cast<char>(changed[i] ^ 0x01);
    Checkpoint doc = stored.doc;
    doc.encrypted_context_summary->ciphertext = crypto::Base64Encode(changed);
    ExpectDecryptionFailure(DecryptCheckpoint(Reseal(doc), &ring_), "authentication failed");
  }
  // The tag itself (last byte) and a truncated ciphertext.
  std::string changed = raw;
  changed.back() = static_cast<char>(changed.back() ^ 0x80);
  Checkpoint doc = stored.doc;
  doc.encrypted_context_summary->ciphertext = crypto::Base64Encode(changed);
  ExpectDecryptionFailure(DecryptCheckpoint(doc, &ring_), "authentication failed");
  doc.encrypted_context_summary->ciphertext = crypto::Base64Encode(raw.substr(0, raw.size() - 1));
  ExpectDecryptionFailure(DecryptCheckpoint(doc, &ring_), "authentication failed");
}

TEST_F(SummaryCipherTest, ChangedNonceFailsAuthentication) {
  SealedCheckpoint stored = Encrypt(SealedWithMarker("agent-c", 3));
  std::string nonce = *crypto::Base64Decode(stored.doc.encrypted_context_summary->nonce);
  nonce[5] = static_cast<char>(nonce[5] ^ 0x10);
  Checkpoint doc = stored.doc;
  doc.encrypted_context_summary->nonce = crypto::Base64Encode(nonce);
  ExpectDecryptionFailure(DecryptCheckpoint(Reseal(doc), &ring_), "authentication failed");
}

TEST_F(SummaryCipherTest, CiphertextMovedToAnotherCheckpointFailsAuthentication) {
  SealedCheckpoint stored = Encrypt(SealedWithMarker("agent-c", 3));
  Checkpoint other_seq = stored.doc;
  other_seq.sequence_number = 4;
  ExpectDecryptionFailure(DecryptCheckpoint(Reseal(other_seq), &ring_), "authentication failed");
  Checkpoint other_id = stored.doc;
  other_id.checkpoint_id = MakeCheckpoint("agent-c", 99).checkpoint_id;
  ExpectDecryptionFailure(DecryptCheckpoint(Reseal(other_id), &ring_), "authentication failed");
  Checkpoint other_agent = stored.doc;
  other_agent.agent_id = "agent-d";
  ExpectDecryptionFailure(DecryptCheckpoint(Reseal(other_agent), &ring_), "authentication failed");
  Checkpoint other_hash = stored.doc;
  other_hash.encrypted_context_summary->plaintext_sha256 = std::string(64, 'e');
  ExpectDecryptionFailure(DecryptCheckpoint(Reseal(other_hash), &ring_), "authentication failed");
}

TEST_F(SummaryCipherTest, ChangedUnencryptedFieldFailsThePlaintextHash) {
  SealedCheckpoint stored = Encrypt(SealedWithMarker("agent-c", 3));
  Checkpoint doc = stored.doc;
  doc.trigger_reason = TriggerReason::kManual;
  ExpectDecryptionFailure(DecryptCheckpoint(Reseal(doc), &ring_), "does not match plaintextSha256");
}

TEST_F(SummaryCipherTest, WrongKeyUnknownKeyIdAndNoKeyAreClearErrors) {
  SealedCheckpoint stored = Encrypt(SealedWithMarker("agent-c", 3));
  // A keyring without the key.
  Keyring other{KeyFromSeed('b'), {KeyFromSeed('c')}};
  ExpectDecryptionFailure(DecryptCheckpoint(stored.doc, &other),
                          "key id " + KeyFromSeed('a').id + " is not in the keyring (holds " +
                              KeyFromSeed('b').id + " (current), " + KeyFromSeed('c').id + ")");
  // A different key under the document's key id (e.g. a replaced key file).
  crypto::EncryptionKey impostor = KeyFromSeed('b');
  impostor.id = KeyFromSeed('a').id;
  Keyring wrong{impostor, {}};
  ExpectDecryptionFailure(DecryptCheckpoint(stored.doc, &wrong),
                          "authentication failed with key id " + KeyFromSeed('a').id);
  // No key at all.
  ExpectDecryptionFailure(DecryptCheckpoint(stored.doc, nullptr),
                          "no encryption key is configured");
}

TEST_F(SummaryCipherTest, RefusesToEncryptTwiceOrUnsealed) {
  SealedCheckpoint stored = Encrypt(SealedWithMarker("agent-c", 3));
  EXPECT_EQ(EncryptCheckpoint(stored, KeyFromSeed('a'), &env_).status().code(),
            StatusCode::kInvalidArgument);
  SealedCheckpoint unsealed{MakeCheckpoint("agent-c", 3), ""};
  EXPECT_EQ(EncryptCheckpoint(unsealed, KeyFromSeed('a'), &env_).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(SummaryCipherTest, DecoderRejectsMixedOrMalformedEnvelopes) {
  SealedCheckpoint stored = Encrypt(SealedWithMarker("agent-c", 3));
  nlohmann::json j = CheckpointToJsonValue(stored.doc, false);
  // Version 1 with an envelope; version 2 with both the envelope and a plaintext summary (a
  // plaintext version 2 document, with the ledger, carries contextSummary alone).
  nlohmann::json v1 = j;
  v1["schemaVersion"] = 1;
  EXPECT_EQ(CheckpointFromJson(v1.dump()).status().code(), StatusCode::kInvalidArgument);
  nlohmann::json both = j;
  both["contextSummary"] =
      CheckpointToJsonValue(SealedWithMarker("agent-c", 3).doc, false)["contextSummary"];
  auto mixed = CheckpointFromJson(both.dump());
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.status().message().rfind("contextSummary", 0), 0u) << mixed.status().message();
  // Unknown member and bad key id inside the envelope.
  nlohmann::json extra = j;
  extra["encryptedContextSummary"]["hint"] = "x";
  EXPECT_EQ(CheckpointFromJson(extra.dump()).status().code(), StatusCode::kInvalidArgument);
  Checkpoint bad_id = stored.doc;
  bad_id.encrypted_context_summary->key_id = "XYZ";
  auto s = ValidateCheckpoint(bad_id);
  EXPECT_EQ(s.message().rfind("encryptedContextSummary.keyId", 0), 0u) << s.message();
  // Schema version 3 is still refused as newer.
  nlohmann::json v3 = j;
  v3["schemaVersion"] = 3;
  EXPECT_EQ(CheckpointFromJson(v3.dump()).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace agentckpt::testing
