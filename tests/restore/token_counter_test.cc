#include "restore/token_counter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/utf8.h"
#include "tests/restore/hostile_texts.h"

namespace agentckpt {
namespace {

using testing::HostileScripts;
using testing::HostileText;
using testing::ReferenceCounts;

constexpr TokenEncoding kEncodings[] = {TokenEncoding::kO200kBase, TokenEncoding::kCl100kBase};

// 100 texts per script (1,200 in all), from 1 byte to about 1.3 KB.
std::vector<std::pair<std::string, std::string>> GeneratedTexts() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& script : HostileScripts()) {
    for (uint64_t seed = 0; seed < 100; ++seed) {
      size_t bytes = seed < 20 ? seed + 1 : 15 * seed - 280;
      if (script == "long_runs") bytes = std::min<size_t>(bytes, 400);  // see LongRun
      out.emplace_back(script, HostileText(script, seed, bytes));
    }
  }
  return out;
}

// The count equals js-tiktoken's on every generated text, under both encodings; the memoizing
// counter agrees with the plain one.
TEST(TokenCounterTest, EqualsJsTiktokenOnGeneratedTexts) {
  auto generated = GeneratedTexts();
  ASSERT_GT(generated.size(), 1000u);
  std::vector<std::string> texts;
  for (const auto& [script, text] : generated) {
    ASSERT_TRUE(IsValidUtf8(text)) << script;
    texts.push_back(text);
  }
  for (TokenEncoding enc : kEncodings) {
    std::vector<size_t> reference = ReferenceCounts(texts, enc);
    ASSERT_EQ(reference.size(), texts.size());
    TokenCounter memo(enc);
    std::map<std::string, std::pair<size_t, size_t>> per_script;  // tokens, mismatches
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::string& script = generated[i].first;
      size_t count = CountTokens(texts[i], enc);
      EXPECT_EQ(count, reference[i]) << TokenEncodingName(enc) << " " << script << " #" << i;
      EXPECT_EQ(memo.Count(texts[i]), count) << script << " #" << i;
      per_script[script].first += reference[i];
      per_script[script].second += count != reference[i];
    }
    for (const auto& [script, s] : per_script) {
      std::printf("%-12s %-11s %7zu tokens, %zu mismatches\n", script.c_str(),
                  std::string(TokenEncodingName(enc)).c_str(), s.first, s.second);
    }
  }
}

// The same on real-world texts (prose in several languages, code, logs, JSON, YAML, markdown):
// tests/fixtures/tokens/texts.
TEST(TokenCounterTest, EqualsJsTiktokenOnFixtureTexts) {
  std::vector<std::string> names, texts;
  for (const auto& entry : std::filesystem::directory_iterator(AGENTCKPT_TOKEN_TEXTS_DIR)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    names.push_back(entry.path().filename());
    texts.push_back(buf.str());
  }
  ASSERT_GE(texts.size(), 40u);
  for (TokenEncoding enc : kEncodings) {
    std::vector<size_t> reference = ReferenceCounts(texts, enc);
    ASSERT_EQ(reference.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      EXPECT_EQ(CountTokens(texts[i], enc), reference[i])
          << TokenEncodingName(enc) << " " << names[i];
    }
  }
}

// Known values, so that a broken reference cannot hide a broken counter.
TEST(TokenCounterTest, KnownCounts) {
  EXPECT_EQ(CountTokens(""), 0u);
  EXPECT_EQ(CountTokens("hello world"), 2u);
  EXPECT_EQ(CountTokens("hello world", TokenEncoding::kCl100kBase), 2u);
  // A special token's text is ordinary text: several tokens, not one.
  EXPECT_GT(CountTokens("<|endoftext|>"), 1u);
}

// Preloading on other threads while this one counts (as the sidecar does at start): each count
// still waits for whole tables. ctest runs each test in its own process, so nothing is loaded yet.
TEST(TokenCounterTest, PreloadOnOtherThreadsWhileCounting) {
  std::vector<std::thread> preloads;
  for (TokenEncoding e : kEncodings) {
    preloads.emplace_back([e] { PreloadEncoding(e); });
    preloads.emplace_back([e] { PreloadEncoding(e); });
  }
  EXPECT_EQ(CountTokens("hello world"), 2u);
  EXPECT_EQ(CountTokens("hello world", TokenEncoding::kCl100kBase), 2u);
  for (std::thread& t : preloads) t.join();
  EXPECT_GT(CountTokens("<|endoftext|>"), 1u);
}

// Texts with characters PCRE2's Unicode 14 tables do not know (CJK extension H, Unicode 15) are
// charged by bytes: never below the reference.
TEST(TokenCounterTest, NewerUnicodeIsChargedNoLessThanTheReference) {
  std::vector<std::string> texts = {"\xF0\xB1\x8D\x90\xF0\xB1\x8D\x91 abc",  // U+31350, U+31351
                                    "中文\xF0\xB1\x8D\x92文字 and more words here"};
  for (TokenEncoding enc : kEncodings) {
    std::vector<size_t> reference = ReferenceCounts(texts, enc);
    ASSERT_EQ(reference.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) EXPECT_GE(CountTokens(texts[i], enc), reference[i]);
  }
}

// Ill-formed UTF-8 is counted as its sanitized form (each bad byte as U+FFFD).
TEST(TokenCounterTest, IllFormedUtf8CountsAsReplacementCharacters) {
  std::string bad = "ok \xFF\xFE tail \xE4\xB8";
  EXPECT_EQ(CountTokens(bad), CountTokens(Utf8Sanitize(bad)));
  TokenCounter memo;
  EXPECT_EQ(memo.Count(bad), CountTokens(bad));
}

// The prompt fitter (prompt_fitter.h) sums the counts of sections that end with a line break
// and start with a printable character: by the reference tokenizer, such joins cost exactly the
// sum of their parts (and the counter, which relies on it, agrees).
TEST(TokenCounterTest, JoiningAtALineBreakBeforeAPrintableCharacterIsExact) {
  std::vector<std::string> texts;  // a, b, a + b, ...
  for (const std::string& script : HostileScripts()) {
    for (uint64_t seed = 0; seed < 10; ++seed) {
      std::string a = HostileText(script, seed, 200) + "\n";
      std::string b = "## " + HostileText(script, seed + 100, 200);
      texts.insert(texts.end(), {a, b, a + b});
    }
  }
  for (TokenEncoding enc : kEncodings) {
    std::vector<size_t> reference = ReferenceCounts(texts, enc);
    ASSERT_EQ(reference.size(), texts.size());
    for (size_t i = 0; i < texts.size(); i += 3) {
      EXPECT_EQ(reference[i + 2], reference[i] + reference[i + 1]) << texts[i + 2];
      EXPECT_EQ(CountTokens(texts[i + 2], enc), reference[i + 2]);
    }
  }
}

// The counter cuts a text after a line break when the next character is not white space (in any
// engine's sense), '/' or an ASCII control character, and counts the parts apart. By the
// reference tokenizer such a join costs exactly the sum of its parts, whatever the script; and
// whatever follows the line break (white space of every kind included), the counter's count of
// the whole text is the reference's.
TEST(TokenCounterTest, ALineBreakBeforeAnyOtherCharacterIsACutInTheReference) {
  const std::vector<std::string> cut = {
      "\xE6\xBC\xA2",  // U+6F22 CJK
      "\xE0\xB8\x81",  // U+0E01 THAI CHARACTER KO KAI
      "\xC3\xA9",      // U+00E9
      "\xCC\x81"
      "abc",               // U+0301 COMBINING ACUTE ACCENT, then letters
      "\xF0\x9F\x98\x80",  // U+1F600 emoji
      "\xE3\x80\x82",      // U+3002 IDEOGRAPHIC FULL STOP
      "\xEF\xBC\x91",      // U+FF11 FULLWIDTH DIGIT ONE
      "\xF0\xA0\x80\x80",  // U+20000 CJK extension B
      "\xEA\xB0\x80",      // U+AC00 HANGUL
      "\xE2\x80\x8B",      // U+200B ZERO WIDTH SPACE (not white space)
      "'s",
      "#"};
  // White space of every kind, alone and before another line break (which a piece starting at
  // the first line break would take in).
  std::vector<std::string> not_cut = {"/", "\x01"};
  for (const char* space : {" ", "\t", "\r", "\xC2\x85", "\xC2\xA0", "\xE1\x9A\x80", "\xE1\xA0\x8E",
                            "\xE2\x80\x80", "\xE2\x80\x8A", "\xE2\x80\xA8", "\xE2\x80\xA9",
                            "\xE2\x80\xAF", "\xE2\x81\x9F", "\xE3\x80\x80"}) {
    not_cut.push_back(space);
    not_cut.push_back(std::string(space) + "\n");
  }
  const std::vector<std::string>* lists[] = {&cut, &not_cut};
  std::vector<std::string> texts;  // a, b, a + b, ...
  std::vector<bool> is_cut;
  for (const std::string& script : HostileScripts()) {
    for (uint64_t seed = 0; seed < 2; ++seed) {
      for (const std::vector<std::string>* list : lists) {
        for (const std::string& x : *list) {
          std::string a = HostileText(script, seed, 120) + "\n";
          std::string b = x + HostileText(script, seed + 50, 120);
          texts.insert(texts.end(), {a, b, a + b});
          is_cut.push_back(list == &cut);
        }
      }
    }
  }
  for (TokenEncoding enc : kEncodings) {
    std::vector<size_t> reference = ReferenceCounts(texts, enc);
    ASSERT_EQ(reference.size(), texts.size());
    TokenCounter memo(enc);
    for (size_t i = 0; i < texts.size(); i += 3) {
      if (is_cut[i / 3]) {
        EXPECT_EQ(reference[i + 2], reference[i] + reference[i + 1])
            << TokenEncodingName(enc) << " " << texts[i + 2];
      }
      EXPECT_EQ(CountTokens(texts[i + 2], enc), reference[i + 2])
          << TokenEncodingName(enc) << " " << texts[i + 2];
      EXPECT_EQ(memo.Count(texts[i + 2]), reference[i + 2]) << TokenEncodingName(enc);
    }
  }
}

}  // namespace
}  // namespace agentckpt
