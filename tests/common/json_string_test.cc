// AppendJsonString against an independent reference: nlohmann::json's own dump() of the same
// string (ensure_ascii off), on every ASCII byte and on generated well-formed UTF-8.
#include "common/json_string.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

namespace agentckpt {
namespace {

std::string Reference(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
}

std::string Ours(const std::string& s) {
  std::string out = "prefix:";
  EXPECT_TRUE(AppendJsonString(s, &out)) << s;
  return out.substr(7);
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

TEST(JsonStringTest, EveryAsciiByteIsWrittenAsTheLibraryWritesIt) {
  for (int c = 0; c < 0x80; ++c) {
    const std::string s = "a" + std::string(1, static_cast<char>(c)) + "z";
    EXPECT_EQ(Ours(s), Reference(s)) << "byte " << c;
  }
  EXPECT_EQ(Ours(""), "\"\"");
  EXPECT_EQ(Ours("\x01\x1f\x7f"), "\"\\u0001\\u001f\x7f\"");
}

TEST(JsonStringTest, GeneratedUtf8MatchesTheLibrary) {
  std::mt19937 random(20261126);
  // Code points from every encoded length, the escaped ASCII ones weighted up.
  const uint32_t kEdges[] = {0x00,   0x08,   0x09,   0x0a,   0x0c,   0x0d,    0x1f,    0x20,
                             0x22,   0x2f,   0x5c,   0x7e,   0x7f,   0x80,    0x7ff,   0x800,
                             0xd7ff, 0xe000, 0xfeff, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff};
  for (int n = 0; n < 3000; ++n) {
    std::string s;
    const int length = static_cast<int>(random() % 64);
    for (int i = 0; i < length; ++i) {
      uint32_t cp;
      switch (random() % 6) {
        case 0:
          cp = kEdges[random() % (sizeof kEdges / sizeof kEdges[0])];
          break;
        case 1:
          cp = random() % 0x80;
          break;
        case 2:
          cp = 0x80 + random() % (0x800 - 0x80);
          break;
        case 3:
          cp = 0x800 + random() % (0x10000 - 0x800);
          if (cp >= 0xd800 && cp <= 0xdfff) cp -= 0x800;  // no surrogates
          break;
        case 4:
          cp = 0x10000 + random() % (0x110000 - 0x10000);
          break;
        default:
          cp = 'a' + random() % 26;
      }
      AppendUtf8(cp, &s);
    }
    ASSERT_EQ(Ours(s), Reference(s)) << "string " << n;
  }
}

// The scan goes eight bytes at a time: a byte that must be escaped is found wherever it falls in
// the word, and in the tail shorter than a word.
TEST(JsonStringTest, AnEscapedByteIsFoundAtEveryOffset) {
  for (const std::string& special :
       {std::string("\""), std::string("\\"), std::string("\n"), std::string("\x01"),
        std::string("\x1f"), std::string(1, '\0'), std::string("\x7f"), std::string("\xc3\xa9"),
        std::string("\xf0\x9f\x98\x80")}) {
    for (size_t length = 1; length <= 40; ++length) {
      for (size_t at = 0; at < length; ++at) {
        std::string s(length, 'x');
        s.replace(at, 1, special);
        ASSERT_EQ(Ours(s), Reference(s)) << "length " << length << " at " << at;
      }
    }
  }
}

TEST(JsonStringTest, TheUncheckedFormCopiesIllFormedBytesAsTheyAre) {
  std::string out;
  AppendJsonStringUnchecked("a\xff\"b", &out);
  EXPECT_EQ(out, "\"a\xff\\\"b\"");
}

TEST(JsonStringTest, IllFormedUtf8IsRefusedAndNothingIsAppended) {
  for (const std::string& bad :
       {std::string("\x80"), std::string("a\xc0\x80"), std::string("\xed\xa0\x80"),
        std::string("\xf5\x80\x80\x80"), std::string("ok\xe2\x82"), std::string("\xff")}) {
    std::string out = "kept";
    EXPECT_FALSE(AppendJsonString(bad, &out));
    EXPECT_EQ(out, "kept");
  }
}

}  // namespace
}  // namespace agentckpt
