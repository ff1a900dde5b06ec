// Key files, key ids, the keyring and base64.
#include "crypto/keyring.h"

#include <gtest/gtest.h>

#include "common/env.h"
#include "common/sha256.h"
#include "crypto/base64.h"
#include "tests/crypto/crypto_test_util.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

using crypto::Base64Decode;
using crypto::Base64Encode;
using crypto::EncryptionKey;
using crypto::LoadKeyFile;
using crypto::LoadKeyring;
using crypto::ParseKey;

TEST(Base64Test, MatchesRfc4648Vectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(*Base64Decode("Zm9vYmE="), "fooba");
  EXPECT_EQ(*Base64Decode("Zm9vYg=="), "foob");
}

TEST(Base64Test, RoundTripsEveryByteValueAndLength) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (size_t n = 0; n <= all.size(); n += 7) {
    auto back = Base64Decode(Base64Encode(all.substr(0, n)));
    ASSERT_TRUE(back.has_value()) << n;
    EXPECT_EQ(*back, all.substr(0, n));
  }
}

TEST(Base64Test, RejectsMalformedInput) {
  EXPECT_FALSE(Base64Decode("Zm9"));       // length
  EXPECT_FALSE(Base64Decode("Zm9v!A=="));  // alphabet
  EXPECT_FALSE(Base64Decode("Zg==Zm9v"));  // padding inside
  EXPECT_FALSE(Base64Decode("Z===").has_value());
  EXPECT_FALSE(Base64Decode("Zh==").has_value());  // non-zero unused bits
  EXPECT_FALSE(Base64Decode("Zm9=").has_value());
  EXPECT_FALSE(Base64Decode("Zm9v-_==").has_value());  // base64url is not accepted
}

TEST(KeyTest, HexAndBase64FormsGiveTheSameKeyAndId) {
  std::string hex = HexKey('a');
  auto from_hex = ParseKey(hex + "\n");
  ASSERT_TRUE(from_hex.ok()) << from_hex.status().ToString();
  std::string raw(reinterpret_cast<const char*>(from_hex->bytes.data()), 32);
  auto from_b64 = ParseKey("  " + Base64Encode(raw) + "\r\n");
  ASSERT_TRUE(from_b64.ok()) << from_b64.status().ToString();
  EXPECT_EQ(from_hex->bytes, from_b64->bytes);
  EXPECT_EQ(from_hex->id, from_b64->id);
  // Upper-case hex is the same key.
  std::string upper = hex;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(ParseKey(upper)->id, from_hex->id);
}

TEST(KeyTest, KeyIdIsTheDocumentedFingerprint) {
  EncryptionKey key = KeyFromSeed('a');
  std::string input = "agentckpt-key-id";
  input.append(reinterpret_cast<const char*>(key.bytes.data()), key.bytes.size());
  EXPECT_EQ(key.id, Sha256Hex(input).substr(0, 16));
  ASSERT_EQ(key.id.size(), 16u);
  // All-zero key: a fixed vector, so the id can never drift silently.
  auto zero = ParseKey(std::string(64, '0'));
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->id,
            Sha256Hex(std::string("agentckpt-key-id") + std::string(32, '\0')).substr(0, 16));
  EXPECT_NE(KeyFromSeed('b').id, key.id);
}

TEST(KeyTest, RejectsAnythingElseWithoutEchoingIt) {
  for (const std::string& bad :
       {std::string(""), std::string(63, 'a'), std::string(65, 'a'), std::string(64, 'g'),
        std::string(32, 'k'),                // 32 raw bytes
        Base64Encode(std::string(31, 'x')),  // 44 characters of 31 bytes
        std::string("not a key at all, just some words here ...."), HexKey('a') + " extra"}) {
    auto key = ParseKey(bad);
    ASSERT_FALSE(key.ok()) << bad;
    EXPECT_EQ(key.status().code(), StatusCode::kInvalidArgument);
    if (bad.size() > 8) {
      EXPECT_EQ(key.status().message().find(bad), std::string::npos);
    }
  }
}

TEST(KeyringTest, LoadsCurrentAndOldKeysAndFindsByIdOnly) {
  TempDir dir;
  WriteTextFile(dir.File("a.key"), HexKey('a') + "\n");
  WriteTextFile(dir.File("b.key"), HexKey('b'));
  WriteTextFile(dir.File("c.key"), HexKey('c'));
  auto ring = LoadKeyring(Env::Default(), dir.File("b.key"),
                          dir.File("a.key") + ", " + dir.File("c.key") + "," + dir.File("b.key"));
  ASSERT_TRUE(ring.ok()) << ring.status().ToString();
  EXPECT_EQ(ring->current().id, KeyFromSeed('b').id);
  ASSERT_NE(ring->Find(KeyFromSeed('a').id), nullptr);
  EXPECT_EQ(ring->Find(KeyFromSeed('a').id)->bytes, KeyFromSeed('a').bytes);
  ASSERT_NE(ring->Find(KeyFromSeed('c').id), nullptr);
  EXPECT_EQ(ring->Find(KeyFromSeed('d').id), nullptr);
  EXPECT_EQ(ring->DescribeIds(), KeyFromSeed('b').id + " (current), " + KeyFromSeed('a').id + ", " +
                                     KeyFromSeed('c').id);
}

TEST(KeyringTest, UnreadableOrMalformedFilesNameTheSettingAndPath) {
  TempDir dir;
  WriteTextFile(dir.File("good.key"), HexKey('a'));
  WriteTextFile(dir.File("bad.key"), "secret");
  auto missing = LoadKeyring(Env::Default(), dir.File("missing.key"), "");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(missing.status().message().rfind("CKPT_ENCRYPTION_KEY_FILE: cannot read key file", 0),
            0u)
      << missing.status().message();
  EXPECT_NE(missing.status().message().find("missing.key"), std::string::npos);

  auto bad_old = LoadKeyring(Env::Default(), dir.File("good.key"), dir.File("bad.key"));
  ASSERT_FALSE(bad_old.ok());
  EXPECT_EQ(bad_old.status().message().rfind("CKPT_ENCRYPTION_OLD_KEY_FILES: key file", 0), 0u)
      << bad_old.status().message();
  EXPECT_EQ(bad_old.status().message().find("secret"), std::string::npos);

  auto file = LoadKeyFile(Env::Default(), dir.File("bad.key"));
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace agentckpt::testing
