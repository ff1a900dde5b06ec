#include "observability/metrics.h"

#include <gtest/gtest.h>

namespace agentckpt {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(SidecarMetricsTest, HistogramBucketsAreCumulative) {
  Histogram h({1, 2, 5});
  h.Observe(0.5);
  h.Observe(1.5);
  h.Observe(1.7);
  h.Observe(9);
  std::string out;
  h.Render("x", "k=\"v\"", &out);
  EXPECT_TRUE(Has(out, "x_bucket{k=\"v\",le=\"1\"} 1")) << out;
  EXPECT_TRUE(Has(out, "x_bucket{k=\"v\",le=\"2\"} 3")) << out;
  EXPECT_TRUE(Has(out, "x_bucket{k=\"v\",le=\"5\"} 3")) << out;
  EXPECT_TRUE(Has(out, "x_bucket{k=\"v\",le=\"+Inf\"} 4")) << out;
  EXPECT_TRUE(Has(out, "x_sum{k=\"v\"} 12.699999999999999")) << out;
  EXPECT_TRUE(Has(out, "x_count{k=\"v\"} 4")) << out;
}

TEST(SidecarMetricsTest, ValueOnABoundGoesInThatBucket) {
  Histogram h({1, 2});
  h.Observe(1);
  std::string out;
  h.Render("y", "", &out);
  EXPECT_TRUE(Has(out, "y_bucket{le=\"1\"} 1")) << out;
  EXPECT_TRUE(Has(out, "y_count 1")) << out;
}

TEST(SidecarMetricsTest, RendersEveryFamilyWithTypeLines) {
  Metrics m;
  m.ObserveCheckpoint("manual", 0.002, 16000);
  m.ObserveCheckpoint("periodic", 0.003, 15000);
  m.CountCheckpointFailure("manual", "unavailable");
  m.ObserveStore("put", 0.001);
  m.SetNatsConnected(true);
  m.CountNatsReconnect();
  m.CountEventPublished("checkpoint.created");
  m.CountEventDropped("checkpoint.failed");
  m.CountHttpRequest(201);
  std::string text = m.Render();
  EXPECT_TRUE(Has(text, "# TYPE agentckpt_checkpoint_duration_seconds histogram"));
  EXPECT_TRUE(Has(text, "agentckpt_checkpoint_duration_seconds_count{trigger=\"manual\"} 1"));
  EXPECT_TRUE(Has(text, "agentckpt_checkpoint_duration_seconds_count{trigger=\"periodic\"} 1"));
  EXPECT_TRUE(Has(text, "agentckpt_checkpoint_size_bytes_bucket{le=\"16384\"} 2"));
  EXPECT_TRUE(Has(text, "agentckpt_checkpoints_total{trigger=\"manual\"} 1"));
  EXPECT_TRUE(Has(
      text, "agentckpt_checkpoint_failures_total{trigger=\"manual\",reason=\"unavailable\"} 1"));
  EXPECT_TRUE(Has(text, "agentckpt_store_operation_duration_seconds_count{operation=\"put\"} 1"));
  EXPECT_TRUE(Has(text, "agentckpt_nats_connected 1"));
  EXPECT_TRUE(Has(text, "agentckpt_nats_reconnects_total 1"));
  EXPECT_TRUE(Has(text, "agentckpt_nats_events_published_total{event=\"checkpoint.created\"} 1"));
  EXPECT_TRUE(Has(text, "agentckpt_nats_events_dropped_total{event=\"checkpoint.failed\"} 1"));
  EXPECT_TRUE(Has(text, "agentckpt_http_requests_total{code=\"201\"} 1"));
  // Every sample line belongs to a family announced with # TYPE.
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    std::string name = line.substr(0, line.find_first_of("{ "));
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      std::string s = suffix;
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
          text.find("# TYPE " + name + " ") == std::string::npos) {
        name = name.substr(0, name.size() - s.size());
      }
    }
    EXPECT_NE(text.find("# TYPE " + name + " "), std::string::npos) << line;
  }
}

TEST(SidecarMetricsTest, LabelValuesAreEscaped) {
  Metrics m;
  m.CountCheckpointFailure("manual", "a\"b\\c\nd");
  EXPECT_NE(m.Render().find("reason=\"a\\\"b\\\\c\\nd\""), std::string::npos);
}

}  // namespace
}  // namespace agentckpt

namespace agentckpt {
namespace {

TEST(SidecarMetricsTest, RestoreDurationHasAThirtySecondBucket) {
  Metrics m;
  m.ObserveRestore(0.12);
  m.ObserveRestore(31);
  m.CountRestoreFailure();
  std::string text = m.Render();
  EXPECT_NE(text.find("# TYPE agentckpt_restore_duration_seconds histogram"), std::string::npos);
  EXPECT_NE(text.find("agentckpt_restore_duration_seconds_bucket{le=\"30\"} 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("agentckpt_restore_duration_seconds_count 2"), std::string::npos);
  EXPECT_NE(text.find("agentckpt_restore_failures_total 1"), std::string::npos);
}

}  // namespace
}  // namespace agentckpt
