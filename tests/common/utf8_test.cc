#include "common/utf8.h"

#include <gtest/gtest.h>

namespace agentckpt {
namespace {

TEST(Utf8Test, Validates) {
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("h\xC3\xA9llo \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xC3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xFF"));
}

TEST(Utf8Test, TruncatesOnCharacterBoundaries) {
  std::string s = "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80z";  // a é 日 😀 z
  EXPECT_EQ(Utf8Length(s), 5u);
  EXPECT_EQ(Utf8TruncateChars(s, 0), "");
  EXPECT_EQ(Utf8TruncateChars(s, 2), "a\xC3\xA9");
  EXPECT_EQ(Utf8TruncateChars(s, 4), "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80");
  EXPECT_EQ(Utf8TruncateChars(s, 10), s);
  for (size_t n = 0; n <= s.size(); ++n) {
    auto cut = Utf8TruncateBytes(s, n);
    EXPECT_LE(cut.size(), n);
    EXPECT_TRUE(IsValidUtf8(cut)) << n;
  }
  EXPECT_EQ(Utf8TruncateBytes(s, 5), "a\xC3\xA9");
}

TEST(Utf8Test, NextCodePointDecodesEveryLength) {
  const std::string s = "a\xC3\xA9\xE6\xBC\xA2\xF0\x9F\x98\x80";  // a, U+00E9, U+6F22, U+1F600
  size_t i = 0;
  EXPECT_EQ(Utf8NextCodePoint(s, &i), 0x61u);
  EXPECT_EQ(i, 1u);
  EXPECT_EQ(Utf8NextCodePoint(s, &i), 0xE9u);
  EXPECT_EQ(i, 3u);
  EXPECT_EQ(Utf8NextCodePoint(s, &i), 0x6F22u);
  EXPECT_EQ(i, 6u);
  EXPECT_EQ(Utf8NextCodePoint(s, &i), 0x1F600u);
  EXPECT_EQ(i, s.size());
}

TEST(Utf8Test, SanitizeReplacesIllFormed) {
  EXPECT_EQ(Utf8Sanitize("ok\xFFok"), "ok\xEF\xBF\xBDok");
  EXPECT_EQ(Utf8Sanitize("\xC3"), "\xEF\xBF\xBD");
  EXPECT_TRUE(IsValidUtf8(Utf8Sanitize("\xED\xA0\x80\xC0\xAF")));
}

}  // namespace
}  // namespace agentckpt
