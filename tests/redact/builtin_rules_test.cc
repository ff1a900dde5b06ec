// redact_internal::KeyValueCandidates against an independent reference: searching the text for
// every key word and keeping the occurrences from which the key-value separator can follow.
#include "redact/builtin_rules.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace agentckpt::redact_internal {
namespace {

// From key word end p, the optional \" (or quote), ']' and blanks, then ':' or '='.
bool SeparatorFollows(std::string_view t, size_t p) {
  if (p < t.size() && t[p] == '\\' && p + 1 < t.size() && t[p + 1] == '"') ++p;
  if (p < t.size() && (t[p] == '"' || t[p] == '\'')) ++p;
  if (p < t.size() && t[p] == ']') ++p;
  while (p < t.size() && (t[p] == ' ' || t[p] == '\t')) ++p;
  return p < t.size() && (t[p] == ':' || t[p] == '=');
}

std::vector<KeyWordHit> Reference(std::string_view lower) {
  std::vector<KeyWordHit> hits;
  for (size_t w = 0; w < KeyWordCount(); ++w) {
    std::string_view word = KeyWord(w);
    for (size_t pos = lower.find(word); pos != std::string_view::npos;
         pos = lower.find(word, pos + 1)) {
      if (SeparatorFollows(lower, pos + word.size())) hits.push_back({w, pos});
    }
  }
  return hits;
}

std::string Describe(const std::vector<KeyWordHit>& hits) {
  std::string out;
  for (const auto& h : hits)
    out += std::string(KeyWord(h.word)) + "@" + std::to_string(h.pos) + " ";
  return out;
}

TEST(KeyValueCandidatesTest, FindsTheKeyWordsASeparatorFollows) {
  const std::vector<std::string_view> texts = {
      "password=hunter2",
      "db_password: s3cr3t and token = abc",
      "{\"client_secret\": \"x\", \"api_key\" : 'y'}",
      "config['secret_key'] = 'z'",
      "\\\"aws_secret_access_key\\\":\\\"v\\\"",
      "password == other; token => t; secret := s",
      "password \"= no; token]: yes; apikey\t\t: tab",
      "the password is long, no separator here",
      "passwordtoken=1 secretsecret:2 ::== \\\"\\\" ",
      "",
      "=:",
  };
  for (std::string_view text : texts) {
    EXPECT_EQ(KeyValueCandidates(text), Reference(text))
        << text << "\n  got: " << Describe(KeyValueCandidates(text))
        << "\n  want: " << Describe(Reference(text));
  }
  EXPECT_FALSE(KeyValueCandidates("password=hunter2").empty());
}

TEST(KeyValueCandidatesTest, AgreesWithTheReferenceOnRandomText) {
  // Pieces that make near misses likely: key word fragments and every character the walk looks at.
  const std::vector<std::string> pieces = {
      "password", "secret", "_key", "api", "token", "aws_", "access", "client", "private", "pass",
      "key",      "phrase", "wd",   "-",   "_",     "\"",   "'",      "\\",     "]",       " ",
      "\t",       ":",      "=",    "a",   "x",     "\n",   "{",      ",",      ">",       "."};
  std::mt19937 rng(20261126);
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    const int n = static_cast<int>(rng() % 24);
    for (int i = 0; i < n; ++i) text += pieces[rng() % pieces.size()];
    auto got = KeyValueCandidates(text);
    auto want = Reference(text);
    ASSERT_EQ(got, want) << "text: " << text << "\n  got: " << Describe(got)
                         << "\n  want: " << Describe(want);
  }
}

}  // namespace
}  // namespace agentckpt::redact_internal
