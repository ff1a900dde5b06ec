#include "restore/prompt_fitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/utf8.h"

namespace agentckpt {
namespace {

// One "token" per byte keeps the arithmetic of these tests obvious.
size_t Bytes(std::string_view s) { return s.size(); }

PromptSection Items(std::string name, int rank, std::vector<std::string> items) {
  PromptSection s;
  s.name = std::move(name);
  s.cut_rank = rank;
  s.items = std::move(items);
  s.left_out_noun = "x";
  return s;
}

TEST(FitSectionsTest, NothingCutWhenItFits) {
  std::vector<PromptSection> s = {Items("a", 1, {"aa\n", "bb\n"})};
  FittedPrompt p = FitSections(s, 100, Bytes);
  EXPECT_EQ(p.text, "aa\nbb\n");
  EXPECT_TRUE(p.cut.empty());
  EXPECT_FALSE(p.hard_cut);
}

TEST(FitSectionsTest, HighestRankIsCutFirstAndOnlyAsMuchAsNeeded) {
  PromptSection fixed;
  fixed.name = "fixed";
  fixed.heading = "HEAD\n";
  std::vector<PromptSection> s = {fixed, Items("low", 1, {"1111\n", "2222\n"}),
                                  Items("high", 2, {"aaaa\n", "bbbb\n", "cccc\n"})};
  // Full: 5 + 10 + 15 = 30 bytes. Dropping one "high" item adds a 36-byte note, so the
  // cheapest fit at 60 is to leave one item of "high" out.
  FittedPrompt p = FitSections(s, 60, Bytes);
  EXPECT_LE(p.tokens, 60u);
  EXPECT_EQ(p.cut, std::vector<std::string>{});  // 30 bytes already fit
  FittedPrompt q = FitSections(s, 29, Bytes);
  EXPECT_LE(q.tokens, 29u);
  ASSERT_FALSE(q.cut.empty());
  EXPECT_EQ(q.cut.front(), "high");
  EXPECT_EQ(q.text.rfind("HEAD\n", 0), 0u);
}

TEST(FitSectionsTest, MinKeepHoldsInTheFirstPassOnly) {
  PromptSection plan = Items("plan", 1, {"A\n", "B\n", "C\n", "D\n"});
  plan.min_keep = 4;  // cut only when everything else is gone
  PromptSection other =
      Items("other", 2, {std::string(199, 'o') + "\n", std::string(199, 'p') + "\n"});
  other.min_keep = 1;
  // Full: 8 + 400 bytes. At 300 the first pass leaves one item of "other" out.
  FittedPrompt p = FitSections({plan, other}, 300, Bytes);
  EXPECT_LE(p.tokens, 300u);
  EXPECT_EQ(p.cut, std::vector<std::string>{"other"});
  EXPECT_NE(p.text.find("A\nB\nC\nD\n"), std::string::npos);
  EXPECT_NE(p.text.find("oooo"), std::string::npos);
  EXPECT_EQ(p.text.find("pppp"), std::string::npos);  // the last item goes first
  // At 100 the second pass takes "other" entirely; the plan is still whole.
  FittedPrompt q = FitSections({plan, other}, 100, Bytes);
  EXPECT_LE(q.tokens, 100u);
  EXPECT_EQ(q.cut, std::vector<std::string>{"other"});
  EXPECT_NE(q.text.find("A\nB\nC\nD\n"), std::string::npos);
  EXPECT_EQ(q.text.find("oooo"), std::string::npos);
}

TEST(FitSectionsTest, DropOrderDecidesWhichItemsGo) {
  PromptSection plan = Items("plan", 1,
                             {std::string(29, 'A') + "\n", std::string(29, 'B') + "\n",
                              std::string(29, 'C') + "\n", std::string(29, 'D') + "\n"});
  plan.drop_order = {0, 1};  // A and B first, then from the end
  // 120 bytes in full; leaving two out costs a note of 38 bytes: 60 + 38 = 98.
  FittedPrompt p = FitSections({plan}, 100, Bytes);
  EXPECT_LE(p.tokens, 100u);
  EXPECT_EQ(p.text.find("AAA"), std::string::npos);
  EXPECT_EQ(p.text.find("BBB"), std::string::npos);
  EXPECT_NE(p.text.find("CCC"), std::string::npos);
  EXPECT_NE(p.text.find("DDD"), std::string::npos);
  EXPECT_NE(p.text.find("(2 x left out to fit the token limit)"), std::string::npos);
}

TEST(FitSectionsTest, TextCutsKeepHeadOrTailOnCharacterBoundaries) {
  PromptSection head;
  head.name = "head";
  head.cut_rank = 1;
  head.is_text = true;
  head.text = "éééééééééééééééééééé";  // 40 bytes
  PromptSection tail = head;
  tail.name = "tail";
  tail.keep_tail = true;
  for (size_t budget = 60; budget < 200; budget += 7) {
    FittedPrompt p = FitSections({head, tail}, budget, Bytes);
    EXPECT_LE(p.tokens, budget);
    EXPECT_TRUE(IsValidUtf8(p.text)) << budget;
  }
}

TEST(FitSectionsTest, NeverCutSectionsAreHardCutAtTheEndWhenAloneTooLong) {
  PromptSection fixed;
  fixed.name = "fixed";
  fixed.heading = "恢复恢复恢复恢复恢复";  // 30 bytes
  FittedPrompt p = FitSections({fixed}, 10, Bytes);
  EXPECT_TRUE(p.hard_cut);
  EXPECT_EQ(p.text, "恢复恢");
  EXPECT_EQ(p.tokens, 9u);
}

}  // namespace
}  // namespace agentckpt
