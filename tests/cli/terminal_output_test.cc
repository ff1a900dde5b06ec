// Human sizes, ages and durations, and table alignment (cli/terminal_output.h).
#include "cli/terminal_output.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

TEST(TerminalOutputTest, HumanSize) {
  EXPECT_EQ(HumanSize(0), "0 B");
  EXPECT_EQ(HumanSize(1023), "1023 B");
  EXPECT_EQ(HumanSize(1024), "1.0 KB");
  EXPECT_EQ(HumanSize(16589), "16.2 KB");
  EXPECT_EQ(HumanSize(3 * 1024 * 1024 + 400 * 1024), "3.4 MB");
  EXPECT_EQ(HumanSize(int64_t{5} * 1024 * 1024 * 1024), "5.0 GB");
}

TEST(TerminalOutputTest, HumanAge) {
  EXPECT_EQ(HumanAge(0), "0s ago");
  EXPECT_EQ(HumanAge(59'999), "59s ago");
  EXPECT_EQ(HumanAge(3 * 60'000 + 5'000), "3m ago");
  EXPECT_EQ(HumanAge(2 * 3'600'000 + 1), "2h ago");
  EXPECT_EQ(HumanAge(5 * 86'400'000LL), "5d ago");
  EXPECT_EQ(HumanAge(-1000), "in the future");
}

TEST(TerminalOutputTest, HumanMillis) {
  EXPECT_EQ(HumanMillis(0.4219), "0.42 ms");
  EXPECT_EQ(HumanMillis(12.34), "12.3 ms");
  EXPECT_EQ(HumanMillis(1534.4), "1534 ms");
}

std::string Printed(const Table& t) {
  testing::TempDir dir;
  std::FILE* f = std::fopen(dir.File("out").c_str(), "w+");
  t.Print(f);
  std::rewind(f);
  std::string out;
  char buf[256];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) out.append(buf, n);
  std::fclose(f);
  return out;
}

TEST(TerminalOutputTest, TableAlignsColumnsAndRightAlignsNumbers) {
  Table t({"SEQ", "NAME", "SIZE"}, {0, 2});
  t.AddRow({"7", "alpha", "16.2 KB"});
  t.AddRow({"12", "b", "512 B"});
  EXPECT_EQ(Printed(t),
            "SEQ  NAME      SIZE\n"
            "  7  alpha  16.2 KB\n"
            " 12  b        512 B\n");
}

TEST(TerminalOutputTest, ErrorExitCodes) {
  EXPECT_EQ(ReportError("t", InvalidArgumentError("x")), 2);
  EXPECT_EQ(ReportError("t", UnavailableError("x")), 3);
  EXPECT_EQ(ReportError("t", DeadlineExceededError("x")), 3);
  EXPECT_EQ(ReportError("t", NotFoundError("x")), 1);
  EXPECT_EQ(ReportError("t", DataLossError("x")), 1);
}

TEST(TerminalOutputTest, ProgressWritesNothingWhenNotATerminal) {
  // The test's stderr is a pipe or file under ctest; on a terminal this test proves nothing.
  Progress p;
  if (p.on_terminal()) GTEST_SKIP() << "stderr is a terminal";
  ::testing::internal::CaptureStderr();
  p.Count("verifying", 1, 2);
  p.Done();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  Progress plain(true, true);
  ::testing::internal::CaptureStderr();
  plain.Update("step one");
  plain.Update("step one");
  plain.Update("step two");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "step one\nstep two\n");
}

}  // namespace
}  // namespace agentckpt
