#include "restore/token_counter.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace agentckpt {
namespace {

std::string TokensDir() { return AGENTCKPT_TOKENS_DIR; }  // set by tests/restore/CMakeLists.txt

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return "";
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Every fixture text: the estimate is at least both real tokenizers' counts; on English prose it
// is at most 1.3 times the larger count.
TEST(TokenCounterTest, NeverBelowEitherTokenizerAndTightOnProse) {
  nlohmann::json counts = nlohmann::json::parse(ReadFileOrDie(TokensDir() + "/counts.json"));
  const auto& texts = counts.at("texts");
  ASSERT_GE(texts.size(), 30u);
  size_t holdout = 0;
  for (const auto& t : texts) {
    std::string file = t.at("file");
    std::string text = ReadFileOrDie(TokensDir() + "/" + file);
    ASSERT_EQ(text.size(), t.at("bytes").get<size_t>()) << file << " changed; run generate.mjs";
    size_t anthropic = t.at("anthropic"), cl100k = t.at("cl100k");
    size_t larger = std::max(anthropic, cl100k);
    size_t estimate = CountTokens(text);
    double ratio = static_cast<double>(estimate) / static_cast<double>(larger);
    std::printf("%-34s anthropic %5zu cl100k %5zu estimate %5zu ratio %.3f\n", file.c_str(),
                anthropic, cl100k, estimate, ratio);
    EXPECT_GE(estimate, anthropic) << file;
    EXPECT_GE(estimate, cl100k) << file;
    if (t.at("kind") == "prose") {
      EXPECT_LE(static_cast<double>(estimate), 1.3 * static_cast<double>(larger)) << file;
    }
    if (t.at("set") == "holdout") ++holdout;
  }
  EXPECT_GE(holdout, 5u);
}

// The prompt fitter measures sections separately (prompt_fitter.h): joining two texts at a line
// break must never cost more than the two counted apart.
TEST(TokenCounterTest, JoiningAtALineBreakCostsNoMoreThanTheParts) {
  nlohmann::json counts = nlohmann::json::parse(ReadFileOrDie(TokensDir() + "/counts.json"));
  std::vector<std::string> joins = {"", " ", "  ", "\n", "\n\n", "\t", "x", "'s", "  indented"};
  for (const auto& t : counts.at("texts")) {
    std::string text = ReadFileOrDie(TokensDir() + "/" + t.at("file").get<std::string>());
    for (size_t pos = text.find('\n'); pos != std::string::npos; pos = text.find('\n', pos + 1)) {
      std::string a = text.substr(0, pos + 1), b = text.substr(pos + 1);
      EXPECT_LE(CountTokens(a + b), CountTokens(a) + CountTokens(b)) << t.at("file") << " " << pos;
      for (const std::string& j : joins) {
        EXPECT_LE(CountTokens(a + j + b), CountTokens(a) + CountTokens(j + b)) << j;
      }
    }
  }
}

TEST(TokenCounterTest, EmptyTextIsZeroAndAnyTextAtLeastOne) {
  EXPECT_EQ(CountTokens(""), 0u);
  EXPECT_GE(CountTokens("a"), 1u);
  EXPECT_GE(CountTokens(" "), 1u);
}

TEST(TokenCounterTest, SameInputSameCount) {
  std::string text = "The agent resumed at step 3 of 5: {\"id\": 42} — 继续工作 🚀";
  EXPECT_EQ(CountTokens(text), CountTokens(std::string(text)));
}

TEST(TokenCounterTest, IllFormedUtf8IsChargedPerByte) {
  std::string bad(100, '\xff');
  EXPECT_GE(CountTokens(bad), 100u);
  std::string cut = "\xe4\xbd";  // the first two bytes of a three-byte character
  EXPECT_GE(CountTokens(cut), 2u);
}

TEST(TokenCounterTest, DenseContentIsChargedMoreThanProse) {
  // 64 hex digits (a SHA-256) cost real tokenizers about 40 tokens; an English sentence of the
  // same length about 13.
  std::string hex = "9a7c3e1f0b2d4c6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e";
  std::string prose = "The store keeps the last few checkpoints of every agent for a day.";
  EXPECT_GE(CountTokens(hex), 40u);
  EXPECT_LT(CountTokens(prose), 20u);
}

TEST(TokenCounterTest, GrowsWithRepetition) {
  std::string unit = "Checkpoint 12 restored; 3 messages pending. ";
  size_t one = CountTokens(unit);
  std::string many;
  for (int i = 0; i < 100; ++i) many += unit;
  EXPECT_GE(CountTokens(many), 90 * one / 2);
}

}  // namespace
}  // namespace agentckpt
