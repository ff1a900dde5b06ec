#include "common/sha256.h"

#include <gtest/gtest.h>

namespace agentckpt {
namespace {

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_TRUE(IsSha256Hex(Sha256Hex("x")));
  EXPECT_FALSE(IsSha256Hex("ABC"));
  EXPECT_FALSE(IsSha256Hex(std::string(64, 'g')));
}

// FIPS 180-2's two-block vector, hashed whole and in parts split at every position (including
// across the 64-byte block boundary and with empty parts).
TEST(Sha256Test, PartsHashAsTheirConcatenation) {
  const std::string text = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  const std::string expected = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
  EXPECT_EQ(Sha256Hex(text), expected);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    std::string_view v(text);
    EXPECT_EQ(Sha256HexOfParts({v.substr(0, cut), v.substr(cut)}), expected) << cut;
    EXPECT_EQ(Sha256HexOfParts({"", v.substr(0, cut), "", v.substr(cut)}), expected) << cut;
  }
  EXPECT_EQ(Sha256HexOfParts({}), Sha256Hex(""));
}

// Every position and every byte value: only 0-9 and a-f pass, anywhere in the 64.
TEST(Sha256Test, IsSha256HexChecksEveryCharacter) {
  const std::string good = Sha256Hex("x");
  for (size_t pos = 0; pos < good.size(); ++pos) {
    for (int c = 0; c < 256; ++c) {
      std::string s = good;
      s[pos] = static_cast<char>(c);
      const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
      ASSERT_EQ(IsSha256Hex(s), hex) << "position " << pos << " byte " << c;
    }
  }
  EXPECT_FALSE(IsSha256Hex(good.substr(1)));
  EXPECT_FALSE(IsSha256Hex(good + "0"));
  EXPECT_FALSE(IsSha256Hex(""));
}

}  // namespace
}  // namespace agentckpt
