#include "journal/digest_checker.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/journal_chain.h"

namespace agentckpt {
namespace {

std::vector<JournalEntry> Chain(int count) { return testing::JournalChain("a", 1, count, 1); }

// Every 7th entry from the 4th tampered with (payload, hash or epoch in turn): exactly those are
// flagged, below and above the helper's threshold, and entries before `first` never pass.
TEST(DigestCheckerTest, EachFlagIsThatEntrysOwnVerification) {
  for (int count : {1, 5, static_cast<int>(DigestChecker::kHelperFrom), 1000}) {
    std::vector<JournalEntry> entries = Chain(count);
    for (size_t i = 3; i < entries.size(); i += 7) {
      if (i % 3 == 0) entries[i].payload += " ";
      if (i % 3 == 1) entries[i].sha256[10] = entries[i].sha256[10] == 'a' ? 'b' : 'a';
      if (i % 3 == 2) entries[i].epoch += 1;
    }
    for (size_t first : {size_t{0}, entries.size() / 3}) {
      SCOPED_TRACE(::testing::Message() << count << " entries from " << first);
      DigestChecker checker(entries, first);
      for (size_t i = 0; i < entries.size(); ++i) {
        const bool tampered = i >= 3 && (i - 3) % 7 == 0;
        const bool expected = i >= first && !tampered;
        ASSERT_EQ(checker.Verified(i), expected) << i;
      }
      EXPECT_FALSE(checker.Verified(entries.size()));
    }
  }
}

// Out of order and from the end first: a caller that waits for a late entry gets it.
TEST(DigestCheckerTest, AnyOrderOfQuestionsIsAnswered) {
  std::vector<JournalEntry> entries = Chain(600);
  entries[599].payload += " ";
  DigestChecker checker(entries, 0);
  EXPECT_FALSE(checker.Verified(599));
  EXPECT_TRUE(checker.Verified(0));
  EXPECT_TRUE(checker.Verified(300));
}

// A fold that stops early destroys the checker while its helper may still be working: the
// destructor stops and joins it (no hang; TSan sees no race).
TEST(DigestCheckerTest, DestroyedEarlyStopsItsHelper) {
  std::vector<JournalEntry> entries = Chain(2000);
  for (int round = 0; round < 20; ++round) {
    DigestChecker checker(entries, 0);
    EXPECT_TRUE(checker.Verified(static_cast<size_t>(round)));
  }
  DigestChecker none(entries, entries.size());
  EXPECT_FALSE(none.Verified(0));
}

}  // namespace
}  // namespace agentckpt
