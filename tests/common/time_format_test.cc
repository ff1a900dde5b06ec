#include "common/time_format.h"

#include <gtest/gtest.h>

namespace agentckpt {
namespace {

TEST(TimeFormatTest, RoundTripsMillis) {
  for (int64_t ms : {0LL, 1793673900000LL, 1793673900123LL, 951782400000LL /*2000-02-29*/,
                     253402300799999LL /*9999-12-31T23:59:59.999*/, -1LL}) {
    std::string s = FormatRfc3339Millis(ms);
    auto back = ParseRfc3339Millis(s);
    ASSERT_TRUE(back.ok()) << s;
    EXPECT_EQ(*back, ms) << s;
  }
  EXPECT_EQ(FormatRfc3339Millis(1793673900000), "2026-11-03T02:45:00.000Z");
  EXPECT_EQ(FormatRfc3339Millis(-1), "1969-12-31T23:59:59.999Z");
}

TEST(TimeFormatTest, AcceptsOffsetsAndFractions) {
  EXPECT_EQ(*ParseRfc3339Millis("2026-11-03T02:45:00Z"), 1793673900000);
  EXPECT_EQ(*ParseRfc3339Millis("2026-11-03T03:45:00.5+01:00"), 1793673900500);
  EXPECT_EQ(*ParseRfc3339Millis("2026-11-03t02:45:00.123456789z"), 1793673900123);
}

TEST(TimeFormatTest, RejectsMalformed) {
  for (const char* bad : {"", "2026-11-03", "2026-13-03T00:00:00Z", "2026-02-30T00:00:00Z",
                          "2026-11-03T24:00:00Z", "2026-11-03T02:45:00", "2026-11-03T02:45:00.Z",
                          "2026-11-03T02:45:00Zx", "2026-11-03 02:45:00Z", "x026-11-03T02:45:00Z",
                          "2026-11-03T02:45:00+0100"}) {
    auto r = ParseRfc3339Millis(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace agentckpt
