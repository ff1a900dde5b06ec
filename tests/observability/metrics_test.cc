#include "observability/metrics.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <vector>

#include "observability/exposition.h"
#include "observability/process_metrics.h"

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
  EXPECT_TRUE(Has(out, "x_sum{k=\"v\"} 12.7")) << out;
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

namespace agentckpt {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A Metrics with at least one sample in every family.
Metrics& Busy(Metrics* m) {
  m->ObserveCheckpoint("manual", 0.002, 16000);
  m->CountCheckpointFailure("periodic", "unavailable");
  m->ObserveStore("put", 0.001);
  m->ObserveRestore(0.05, 1764000100500);
  for (const char* phase : {"load", "replay", "workspace", "prompt", "resume"}) {
    m->ObserveRestorePhase(phase, 0.01);
  }
  m->ObservePromptTokens(1200);
  m->SetLastCheckpointTime(1764000000123);
  m->CountJournalEntry("context.patch");
  m->CountLedgerCall("begin", "started");
  m->CountGateRequested();
  m->CountGateResolved("approved");
  m->CountGateConsumed();
  m->ObserveHttpRequest("GET", "/v1/context", 0.0004);
  m->CountHttpRequest(200);
  return *m;
}

TEST(SidecarMetricsTest, NamesFollowPrometheusConventions) {
  Metrics m;
  m.SetLiveSource([] { return LiveFigures{}; });
  std::string text = Busy(&m).Render();
  size_t families = 0;
  for (size_t pos = text.find("# TYPE "); pos != std::string::npos;
       pos = text.find("# TYPE ", pos + 1)) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos + 7, end - pos - 7);
    std::string name = line.substr(0, line.find(' '));
    std::string type = line.substr(line.find(' ') + 1);
    ++families;
    EXPECT_TRUE(name.rfind("agentckpt_", 0) == 0 || name.rfind("process_", 0) == 0) << name;
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"), std::string::npos)
        << name;
    EXPECT_EQ(type == "counter", EndsWith(name, "_total")) << name << " " << type;
    if (type == "histogram") {
      EXPECT_TRUE(EndsWith(name, "_seconds") || EndsWith(name, "_bytes") ||
                  EndsWith(name, "_tokens"))
          << name << ": a histogram's name ends with its unit";
    }
    for (const char* unit : {"_milliseconds", "_ms", "_kilobytes", "_minutes"}) {
      EXPECT_FALSE(EndsWith(name, unit) || name.find(std::string(unit) + "_") != std::string::npos)
          << name << ": base units only";
    }
    // Announced once.
    EXPECT_EQ(text.find("# TYPE " + name + " "), pos) << name;
  }
  EXPECT_GE(families, 35u) << text;
}

TEST(SidecarMetricsTest, NewFamiliesCarryTheirSamples) {
  Metrics m;
  LiveFigures live;
  live.pending_gates = 2;
  live.started_calls = 3;
  live.outcome_unknown_calls = 4;
  live.journal_entries_since_checkpoint = 5;
  live.journal_bytes_since_checkpoint = 600;
  live.journal_undurable_entries = 1;
  live.journal_refusing_changes = true;
  m.SetLiveSource([live] { return live; });
  m.SetLedgerOutcomeUnknown(9);  // the live count wins
  std::string text = Busy(&m).Render();
  EXPECT_TRUE(Has(text, "agentckpt_build_info{version=\"" AGENTCKPT_TEST_VERSION "\"} 1")) << text;
  EXPECT_TRUE(Has(text, "agentckpt_last_checkpoint_timestamp_seconds 1764000000.123"));
  EXPECT_TRUE(Has(text, "agentckpt_last_restore_duration_seconds 0.05"));
  EXPECT_TRUE(Has(text, "agentckpt_last_restore_timestamp_seconds 1764000100.5"));
  EXPECT_TRUE(Has(text, "agentckpt_restore_phase_duration_seconds_count{phase=\"workspace\"} 1"));
  EXPECT_TRUE(Has(text, "agentckpt_restore_prompt_tokens_bucket{le=\"1000\"} 0"));
  EXPECT_TRUE(Has(text, "agentckpt_restore_prompt_tokens_bucket{le=\"2000\"} 1"));
  EXPECT_TRUE(Has(text, "agentckpt_journal_entries_total{kind=\"context.patch\"} 1"));
  EXPECT_TRUE(Has(text, "agentckpt_ledger_calls_total{operation=\"begin\",result=\"started\"} 1"));
  EXPECT_TRUE(Has(text, "agentckpt_gates_requested_total 1"));
  EXPECT_TRUE(Has(text, "agentckpt_gates_resolved_total{decision=\"approved\"} 1"));
  EXPECT_TRUE(Has(text, "agentckpt_gates_consumed_total 1"));
  EXPECT_TRUE(Has(text, "agentckpt_gates_pending 2"));
  EXPECT_TRUE(Has(text, "agentckpt_ledger_started_calls 3"));
  EXPECT_TRUE(Has(text, "agentckpt_ledger_outcome_unknown_calls 4"));
  EXPECT_TRUE(Has(text, "agentckpt_journal_entries_since_checkpoint 5"));
  EXPECT_TRUE(Has(text, "agentckpt_journal_bytes_since_checkpoint 600"));
  EXPECT_TRUE(Has(text, "agentckpt_journal_undurable_entries 1"));
  EXPECT_TRUE(Has(text, "agentckpt_journal_refusing_changes 1"));
  EXPECT_TRUE(Has(text,
                  "agentckpt_http_request_duration_seconds_bucket{method=\"GET\",route=\"/v1/"
                  "context\",le=\"0.0005\"} 1"));
  EXPECT_TRUE(Has(text, "agentckpt_restore_duration_seconds_bucket{le=\"0.1\"} 1")) << text;
}

TEST(SidecarMetricsTest, WithoutALiveSourceTheRestoreCountStands) {
  Metrics m;
  m.SetLedgerOutcomeUnknown(7);
  std::string text = m.Render();
  EXPECT_TRUE(Has(text, "agentckpt_ledger_outcome_unknown_calls 7"));
  EXPECT_EQ(text.find("agentckpt_gates_pending"), std::string::npos);
  // No checkpoint known yet: the family is announced without a sample.
  EXPECT_EQ(text.find("\nagentckpt_last_checkpoint_timestamp_seconds "), std::string::npos);
  // A declared trigger shows at zero before its first checkpoint.
  m.DeclareTrigger("periodic");
  text = m.Render();
  EXPECT_TRUE(Has(text, "agentckpt_checkpoints_total{trigger=\"periodic\"} 0"));
  EXPECT_TRUE(Has(text, "agentckpt_checkpoint_duration_seconds_count{trigger=\"periodic\"} 0"));
  m.SetLastCheckpointTime(2000);
  m.SetLastCheckpointTime(1000);  // older: ignored
  EXPECT_TRUE(Has(m.Render(), "agentckpt_last_checkpoint_timestamp_seconds 2"));
}

TEST(SidecarMetricsTest, ProcessMetricsComeFromProc) {
  ProcessStats before;
  ASSERT_TRUE(ReadProcessStats(&before));
  EXPECT_GT(before.resident_bytes, 1024 * 1024);
  EXPECT_GT(before.virtual_bytes, before.resident_bytes);
  const double now = static_cast<double>(time(nullptr));
  EXPECT_LE(before.start_time_seconds, now + 1);
  EXPECT_GT(before.start_time_seconds, now - 3600);
  EXPECT_GE(before.open_fds, 3);
  EXPECT_GT(before.max_fds, before.open_fds);
  // Opening descriptors shows; burning CPU shows.
  std::vector<FILE*> files;
  for (int i = 0; i < 5; ++i) files.push_back(fopen("/proc/self/stat", "r"));
  volatile double x = 0;
  ProcessStats after;
  do {
    for (int i = 0; i < 1000000; ++i) x = x + i;
    ASSERT_TRUE(ReadProcessStats(&after));
  } while (after.cpu_seconds <= before.cpu_seconds);
  EXPECT_EQ(after.open_fds, before.open_fds + 5);
  for (FILE* f : files) fclose(f);
  std::string text = Metrics().Render();
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                           "process_virtual_memory_bytes", "process_start_time_seconds",
                           "process_open_fds", "process_max_fds"}) {
    EXPECT_NE(text.find(std::string("\n") + name + " "), std::string::npos) << name;
  }
}

TEST(SidecarMetricsTest, ValuesReadBackExactly) {
  EXPECT_EQ(FormatMetricValue(0.1), "0.1");
  EXPECT_EQ(FormatMetricValue(0.0025), "0.0025");
  EXPECT_EQ(FormatMetricValue(30), "30");
  EXPECT_EQ(FormatMetricValue(1764000000.123), "1764000000.123");
  EXPECT_EQ(FormatMetricValue(0.0005), "0.0005");
  EXPECT_EQ(FormatMetricValue(1048576), "1048576");
  EXPECT_EQ(FormatMetricValue(0), "0");
  EXPECT_EQ(FormatMetricValue(1e-9), "1e-09");
  EXPECT_EQ(FormatMetricValue(1.0 / 0.0), "+Inf");
}

}  // namespace
}  // namespace agentckpt
