// The W3C traceparent parser and formatter, and the thread's current context.
#include "tracing/trace_context.h"

#include <gtest/gtest.h>

#include <thread>

namespace agentckpt::tracing {
namespace {

constexpr char kHeader[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceparentTest, ParsesAndFormatsAValidHeader) {
  auto c = ParseTraceparent(kHeader);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->TraceIdHex(), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(c->SpanIdHex(), "00f067aa0ba902b7");
  EXPECT_TRUE(c->sampled);
  EXPECT_EQ(FormatTraceparent(*c), kHeader);
  auto unsampled = ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(unsampled.has_value());
  EXPECT_FALSE(unsampled->sampled);
  // Other flag bits are kept out; only "sampled" matters here.
  auto other = ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03");
  ASSERT_TRUE(other.has_value());
  EXPECT_TRUE(other->sampled);
}

TEST(TraceparentTest, AcceptsALaterVersionWithMoreFields) {
  auto c =
      ParseTraceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->SpanIdHex(), "00f067aa0ba902b7");
}

TEST(TraceparentTest, RejectsEveryMalformedHeader) {
  for (const char* bad : {
           "", "garbage",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",       // no flags
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  // extra field, v00
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",     // short flags
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // forbidden version
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",    // upper case
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",    // zero trace id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",    // zero span id
           "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // wrong separator
           "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",    // not hex
           "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // version not hex
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",    // flags not hex
           "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",   // later version, no '-'
       }) {
    EXPECT_FALSE(ParseTraceparent(bad).has_value()) << bad;
  }
}

TEST(ContextScopeTest, SetsAndRestoresTheThreadsContext) {
  EXPECT_FALSE(CurrentContext().valid());
  auto outer = *ParseTraceparent(kHeader);
  auto inner = *ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  {
    ContextScope a(outer);
    EXPECT_EQ(CurrentContext().span_id, outer.span_id);
    {
      ContextScope b(inner);
      EXPECT_EQ(CurrentContext().span_id, inner.span_id);
      // Another thread has its own (empty) context.
      std::thread([] { EXPECT_FALSE(CurrentContext().valid()); }).join();
      ContextScope ignored{TraceContext()};  // an invalid context changes nothing
      EXPECT_EQ(CurrentContext().span_id, inner.span_id);
    }
    EXPECT_EQ(CurrentContext().span_id, outer.span_id);
  }
  EXPECT_FALSE(CurrentContext().valid());
}

}  // namespace
}  // namespace agentckpt::tracing
