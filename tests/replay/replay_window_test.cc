#include "replay/replay_window.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/utf8.h"

namespace agentckpt {
namespace {

TEST(CutBodyToUtf8Test, KeepsShortBodiesWhole) {
  EXPECT_EQ(CutBodyToUtf8("hello", 10), "hello");
  EXPECT_EQ(CutBodyToUtf8("hello", 5), "hello");
  EXPECT_EQ(CutBodyToUtf8("", 0), "");
}

TEST(CutBodyToUtf8Test, CutsAsciiAtTheLimit) {
  EXPECT_EQ(CutBodyToUtf8("abcdefgh", 3), "abc");
  EXPECT_EQ(CutBodyToUtf8("abcdefgh", 0), "");
}

TEST(CutBodyToUtf8Test, NeverSplitsACharacter) {
  const std::string text =
      "ab\xE2\x82\xAC"
      "cd";  // "ab€cd": the euro sign takes 3 bytes
  EXPECT_EQ(CutBodyToUtf8(text, 2), "ab");
  EXPECT_EQ(CutBodyToUtf8(text, 3), "ab");
  EXPECT_EQ(CutBodyToUtf8(text, 4), "ab");
  EXPECT_EQ(CutBodyToUtf8(text, 5), "ab\xE2\x82\xAC");
  const std::string emoji = "\xF0\x9F\x98\x80\xF0\x9F\x98\x80";  // two 4-byte characters
  EXPECT_EQ(CutBodyToUtf8(emoji, 7), "\xF0\x9F\x98\x80");
  EXPECT_EQ(CutBodyToUtf8(emoji, 3), "");
}

TEST(CutBodyToUtf8Test, EveryCutOfMixedTextIsAValidPrefix) {
  const std::string text = "Zürich → 東京 😀 done";
  for (size_t limit = 0; limit <= text.size() + 2; ++limit) {
    std::string cut = CutBodyToUtf8(text, limit);
    EXPECT_LE(cut.size(), limit);
    EXPECT_TRUE(IsValidUtf8(cut)) << limit;
    EXPECT_EQ(text.compare(0, cut.size(), cut), 0) << limit;
    // Longest: adding the next character would exceed the limit.
    if (cut.size() < text.size()) {
      size_t next = cut.size() + 1;
      while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xc0) == 0x80) ++next;
      EXPECT_GT(next, limit) << limit;
    }
  }
}

TEST(CutBodyToUtf8Test, ReplacesIllFormedBytes) {
  std::string cut = CutBodyToUtf8("ok\xFF\xFEtail", 100);
  EXPECT_TRUE(IsValidUtf8(cut));
  EXPECT_EQ(cut, "ok\xEF\xBF\xBD\xEF\xBF\xBDtail");
  std::string short_cut = CutBodyToUtf8("ok\xFF\xFEtail", 4);
  EXPECT_TRUE(IsValidUtf8(short_cut));
  EXPECT_LE(short_cut.size(), 4u);
  EXPECT_EQ(short_cut.substr(0, 2), "ok");
}

TEST(ReplayWindowTest, EmptyWindow) {
  ReplayWindow window(7, 50, 100);
  ReplayResult result = window.TakeResult();
  EXPECT_TRUE(result.messages.empty());
  EXPECT_EQ(result.handled_count, 0u);
  EXPECT_EQ(result.pending_count, 0u);
  EXPECT_EQ(result.truncated, 0u);
  EXPECT_EQ(result.ack_floor_now, 7u);
  EXPECT_TRUE(result.pending_subjects.empty());
}

TEST(ReplayWindowTest, SplitsHandledAndPendingAtTheAckFloor) {
  ReplayWindow window(12, 50, 100);
  for (uint64_t seq = 10; seq <= 15; ++seq) {
    window.Add(seq, seq % 2 ? "in.b" : "in.a", static_cast<int64_t>(seq) * 1000, "m");
  }
  ReplayResult result = window.TakeResult();
  ASSERT_EQ(result.messages.size(), 6u);
  EXPECT_EQ(result.handled_count, 3u);  // 10, 11, 12
  EXPECT_EQ(result.pending_count, 3u);  // 13, 14, 15
  EXPECT_EQ(result.truncated, 0u);
  EXPECT_TRUE(result.messages[2].handled);
  EXPECT_FALSE(result.messages[3].handled);
  EXPECT_EQ(result.messages[0].timestamp_ms, 10000);
  EXPECT_EQ(result.pending_subjects, (std::vector<std::string>{"in.a", "in.b"}));
}

TEST(ReplayWindowTest, KeepsTheNewestOldestFirst) {
  ReplayWindow window(100, 50, 100);
  for (uint64_t seq = 1; seq <= 137; ++seq) window.Add(seq, "in", 0, std::to_string(seq));
  ReplayResult result = window.TakeResult();
  ASSERT_EQ(result.messages.size(), 50u);
  EXPECT_EQ(result.truncated, 87u);
  EXPECT_EQ(result.handled_count, 100u);
  EXPECT_EQ(result.pending_count, 37u);
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(result.messages[i].stream_sequence, 88 + i);
    EXPECT_EQ(result.messages[i].data, std::to_string(88 + i));
  }
}

TEST(ReplayWindowTest, ZeroMaxMessagesCountsEverythingAsTruncated) {
  ReplayWindow window(0, 0, 100);
  for (uint64_t seq = 1; seq <= 5; ++seq) window.Add(seq, "in", 0, "x");
  ReplayResult result = window.TakeResult();
  EXPECT_TRUE(result.messages.empty());
  EXPECT_EQ(result.truncated, 5u);
  EXPECT_EQ(result.pending_count, 5u);
}

TEST(ReplayWindowTest, CutsBodiesAndKeepsTheOriginalSize) {
  ReplayWindow window(0, 5, 4);
  window.Add(1, "in", 0, "h\xC3\xA9llo");  // "héllo", 6 bytes
  ReplayResult result = window.TakeResult();
  ASSERT_EQ(result.messages.size(), 1u);
  EXPECT_EQ(result.messages[0].data, "h\xC3\xA9l");
  EXPECT_EQ(result.messages[0].original_size, 6u);
}

TEST(ReplayWindowTest, BoundsTheDistinctPendingSubjects) {
  ReplayWindow window(0, 1, 10);
  const uint64_t n = ReplayWindow::kMaxPendingSubjects + 40;
  for (uint64_t seq = 1; seq <= n; ++seq) window.Add(seq, "in." + std::to_string(seq), 0, "");
  ReplayResult result = window.TakeResult();
  EXPECT_EQ(result.pending_count, n);
  EXPECT_EQ(result.pending_subjects.size(), ReplayWindow::kMaxPendingSubjects);
  EXPECT_TRUE(std::is_sorted(result.pending_subjects.begin(), result.pending_subjects.end()));
}

TEST(ReplayWindowTest, TakeResultResetsTheWindow) {
  ReplayWindow window(1, 3, 10);
  window.Add(1, "a", 0, "x");
  window.Add(2, "b", 0, "y");
  (void)window.TakeResult();
  EXPECT_EQ(window.seen(), 0u);
  window.Add(1, "a", 0, "x");
  ReplayResult again = window.TakeResult();
  EXPECT_EQ(again.messages.size(), 1u);
  EXPECT_EQ(again.handled_count, 1u);
}

TEST(ReplayWindowDeathTest, RejectsSequencesOutOfOrder) {
  ReplayWindow window(0, 3, 10);
  window.Add(5, "a", 0, "x");
  EXPECT_DEATH(window.Add(5, "a", 0, "x"), "sequence");
}

}  // namespace
}  // namespace agentckpt
