// The 4,000-token bound holds for real: prompts built from the max fixture with its context and
// 50 replayed bodies written in hostile scripts are counted by js-tiktoken (node), not by the
// counter that built them, and never exceed the limit under the chosen encoding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/utf8.h"
#include "restore/prompt_builder.h"
#include "tests/restore/hostile_texts.h"
#include "tests/support/fixtures.h"

namespace agentckpt {
namespace {

using testing::HostileScripts;
using testing::HostileText;

struct Built {
  std::string script;
  size_t budget;
  RestorationPrompt prompt;
};

std::vector<Built> BuildAll(TokenEncoding enc) {
  std::vector<Built> out;
  const Checkpoint fixture = testing::LoadFixtureCheckpoint("checkpoint-max.json");
  for (const std::string& script : HostileScripts()) {
    Checkpoint cp = fixture;
    ReplayResult replay;
    testing::MakeHostilePromptInputs(script, &cp, &replay);
    PromptInput in;
    in.agent_id = cp.agent_id;
    in.checkpoint = &cp;
    in.checkpoint_age_ms = 125'000;
    in.replay_configured = true;
    in.replay = &replay;
    for (size_t budget : {4000u, 1500u}) {
      PromptOptions opts;
      opts.max_tokens = budget;
      opts.tokenizer = enc;
      out.push_back({script, budget, BuildRestorationPrompt(in, opts)});
    }
  }
  return out;
}

void ExpectWithinTheLimitByTheReference(TokenEncoding enc) {
  std::vector<Built> built = BuildAll(enc);
  std::vector<std::string> texts;
  for (const Built& b : built) texts.push_back(b.prompt.text);
  std::vector<size_t> reference = testing::ReferenceCounts(texts, enc);
  ASSERT_EQ(reference.size(), built.size());
  for (size_t i = 0; i < built.size(); ++i) {
    const Built& b = built[i];
    std::printf("%-11s %-12s budget %4zu: %6zu bytes, %4zu tokens by js-tiktoken\n",
                std::string(TokenEncodingName(enc)).c_str(), b.script.c_str(), b.budget,
                b.prompt.text.size(), reference[i]);
    EXPECT_TRUE(IsValidUtf8(b.prompt.text));
    EXPECT_LE(reference[i], b.budget) << b.script;
    EXPECT_EQ(reference[i], b.prompt.tokens) << b.script;  // the reported count is exact
    EXPECT_GE(reference[i], b.budget / 2) << b.script;     // the budget is used, not wasted
    EXPECT_FALSE(b.prompt.cut.empty()) << b.script;        // the inputs did not fit whole
    // Sections were cut, not the end of the text: the fitter's sum of section counts is exact.
    EXPECT_EQ(std::count(b.prompt.cut.begin(), b.prompt.cut.end(), "end"), 0) << b.script;
  }
}

TEST(PromptTokenBoundTest, O200kBaseHostileScriptsStayWithinTheLimit) {
  ExpectWithinTheLimitByTheReference(TokenEncoding::kO200kBase);
}

TEST(PromptTokenBoundTest, Cl100kBaseHostileScriptsStayWithinTheLimit) {
  ExpectWithinTheLimitByTheReference(TokenEncoding::kCl100kBase);
}

}  // namespace
}  // namespace agentckpt
