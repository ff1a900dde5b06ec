// The tracer and its OTLP/HTTP exporter against a loopback OTLP receiver: the span tree and its
// times (a FakeEnv: no sleeps), sampling, the bounded queue's drop counter, failures, and the
// bounded shutdown with a collector that never answers.
#include "tracing/tracer.h"

#include <gtest/gtest.h>

#include <chrono>

#include "common/fake_env.h"
#include "tests/support/nats_server.h"
#include "tests/tracing/otlp_receiver.h"
#include "tracing/otlp_http_exporter.h"

namespace agentckpt::tracing {
namespace {

using agentckpt::testing::OtlpReceiver;
using agentckpt::testing::ReceivedSpan;
using Clock = std::chrono::steady_clock;

std::unique_ptr<SpanExporter> ExporterTo(const std::string& endpoint) {
  OtlpHttpOptions o;
  o.endpoint = endpoint + "/v1/traces";
  o.resource.attributes = {{"service.name", "tracer-test"}};
  auto e = NewOtlpHttpExporter(std::move(o));
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(e).value();
}

// What the tracer reported, kept for the test to read.
struct Reports {
  std::mutex mu;
  std::vector<std::pair<std::string, nlohmann::json>> items;
  std::function<void(const std::string&, const nlohmann::json&)> Sink() {
    return [this](const std::string& m, const nlohmann::json& f) {
      std::lock_guard<std::mutex> lock(mu);
      items.emplace_back(m, f);
    };
  }
  std::optional<nlohmann::json> Find(const std::string& prefix) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [m, f] : items) {
      if (m.rfind(prefix, 0) == 0) return f;
    }
    return std::nullopt;
  }
};

// Sets the global tracer for a test and clears it after.
class GlobalTracerScope {
 public:
  explicit GlobalTracerScope(Tracer* t) { SetGlobalTracer(t); }
  ~GlobalTracerScope() { SetGlobalTracer(nullptr); }
};

const ReceivedSpan* Named(const std::vector<ReceivedSpan>& spans, const std::string& name) {
  for (const ReceivedSpan& s : spans) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST(TracerTest, ExportsTheSpanTreeWithTheEnvsTimes) {
  OtlpReceiver receiver;
  FakeEnv env;
  BatchOptions b;
  b.schedule_delay_ms = 10;
  Tracer tracer(&env, ExporterTo(receiver.endpoint()), b, nullptr);
  GlobalTracerScope global(&tracer);
  {
    Span root = StartSpan("root", SpanKind::kServer);
    SpanScope scope(root);
    root.SetString("gen_ai.agent.id", "a1");
    env.AdvanceMicros(1500);
    Span child = StartSpan("child");
    child.SetInt("agentckpt.checkpoint.sequence", 7);
    child.SetBool("flag", true);
    child.SetDouble("ratio", 0.5);
    env.AdvanceMicros(2500);
    child.SetError(UnavailableError("store down"));
    child.End();
    env.AdvanceMicros(1000);
  }
  ASSERT_TRUE(tracer.ForceFlush(10000));
  auto spans = receiver.Spans();
  ASSERT_EQ(spans.size(), 2u);
  const ReceivedSpan* root = Named(spans, "root");
  const ReceivedSpan* child = Named(spans, "child");
  ASSERT_NE(root, nullptr);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(root->service, "tracer-test");
  EXPECT_EQ(root->parent_span_id, "");
  EXPECT_EQ(root->kind, 2);
  EXPECT_EQ(child->trace_id, root->trace_id);
  EXPECT_EQ(child->parent_span_id, root->span_id);
  EXPECT_EQ(child->end_ns - child->start_ns, 2'500'000);
  EXPECT_EQ(root->end_ns - root->start_ns, 5'000'000);
  EXPECT_EQ(child->start_ns - root->start_ns, 1'500'000);
  // Unix time from the Env's wall clock at the tracer's start.
  EXPECT_EQ(root->start_ns / 1'000'000, FakeEnv().NowUnixMillis());
  EXPECT_EQ(child->status_code, 2);
  EXPECT_EQ(root->status_code, 0);
  EXPECT_EQ(child->Attr("agentckpt.checkpoint.sequence"), "7");
  EXPECT_EQ(child->Attr("flag"), "true");
  EXPECT_EQ(child->Attr("ratio"), "0.5");
  EXPECT_EQ(root->Attr("gen_ai.agent.id"), "a1");
  EXPECT_EQ(tracer.exported(), 2u);
  EXPECT_EQ(tracer.dropped(), 0u);
  EXPECT_EQ(receiver.bad_bodies(), 0);
}

TEST(TracerTest, FollowsARemoteParentAndItsSamplingDecision) {
  OtlpReceiver receiver;
  FakeEnv env;
  Tracer tracer(&env, ExporterTo(receiver.endpoint()), BatchOptions{}, nullptr);
  GlobalTracerScope global(&tracer);
  auto sampled = *ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  auto unsampled = *ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00");
  {
    Span a = StartSpanWithParent("a", SpanKind::kServer, sampled);
    EXPECT_TRUE(a.recording());
    EXPECT_EQ(a.context().TraceIdHex(), sampled.TraceIdHex());
    Span b = StartSpanWithParent("b", SpanKind::kServer, unsampled);
    EXPECT_FALSE(b.recording());
    // Not recorded, but the trace goes on with the decision for whoever is called next.
    EXPECT_TRUE(b.context().valid());
    EXPECT_EQ(b.context().TraceIdHex(), unsampled.TraceIdHex());
    EXPECT_FALSE(b.context().sampled);
    EXPECT_NE(b.context().SpanIdHex(), unsampled.SpanIdHex());
    SpanScope scope(b);
    EXPECT_FALSE(StartSpan("c").recording());
    EXPECT_FALSE(StartChildSpan("d").recording());
  }
  ASSERT_TRUE(tracer.ForceFlush(10000));
  auto spans = receiver.Spans();
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].name, "a");
  EXPECT_EQ(spans[0].parent_span_id, "00f067aa0ba902b7");
}

TEST(TracerTest, EverySpanIsInertWithoutATracer) {
  ASSERT_EQ(GlobalTracer(), nullptr);
  Span s = StartSpan("x");
  EXPECT_FALSE(s.recording());
  EXPECT_FALSE(s.context().valid());
  SpanScope scope(s);
  EXPECT_FALSE(CurrentContext().valid());
  s.SetString("k", "v");
  s.SetError(InternalError("e"));
  s.End();
  EXPECT_FALSE(StartChildSpan("y").recording());
}

TEST(TracerTest, AFullQueueDropsAndCountsInsteadOfBlocking) {
  OtlpReceiver receiver;
  receiver.Stall();
  FakeEnv env;
  BatchOptions b;
  b.max_queue = 4;
  b.max_batch = 1;
  b.schedule_delay_ms = 1;
  b.export_timeout_ms = 120'000;  // the stalled export holds the thread until Release
  Reports reports;
  Tracer tracer(&env, ExporterTo(receiver.endpoint()), b, reports.Sink());
  GlobalTracerScope global(&tracer);
  StartSpan("first").End();
  // The first batch is at the collector, unanswered: the thread is busy, the queue fills.
  auto held = receiver.WaitFor([](const auto& s) { return s.size() == 1; });
  ASSERT_EQ(held.size(), 1u);
  for (int i = 0; i < 10; ++i) StartSpan("more").End();
  EXPECT_EQ(tracer.dropped(), 6u);
  receiver.Release();
  ASSERT_TRUE(tracer.ForceFlush(30000));
  EXPECT_EQ(tracer.exported(), 5u);
  EXPECT_EQ(receiver.Spans().size(), 5u);
  tracer.Shutdown(1000);
  auto dropped = reports.Find("spans dropped");
  ASSERT_TRUE(dropped.has_value());
  EXPECT_EQ((*dropped)["droppedTotal"], 6);
  // After shutdown spans are dropped too, never queued.
  StartSpan("late").End();
  EXPECT_EQ(tracer.dropped(), 7u);
}

TEST(TracerTest, AnUnreachableCollectorCountsAFailure) {
  FakeEnv env;
  Reports reports;
  const int port = agentckpt::testing::PickFreePort();  // nothing listens there
  Tracer tracer(&env, ExporterTo("http://127.0.0.1:" + std::to_string(port)), BatchOptions{},
                reports.Sink());
  GlobalTracerScope global(&tracer);
  StartSpan("lost").End();
  ASSERT_TRUE(tracer.ForceFlush(30000));
  EXPECT_EQ(tracer.failed(), 1u);
  EXPECT_EQ(tracer.exported(), 0u);
  auto failed = reports.Find("trace export failed");
  ASSERT_TRUE(failed.has_value());
  EXPECT_NE((*failed)["reason"].get<std::string>().find("connect"), std::string::npos) << *failed;
}

TEST(TracerTest, ShutdownCutsOffAnExportToACollectorThatNeverAnswers) {
  OtlpReceiver receiver;
  receiver.Stall();
  FakeEnv env;
  BatchOptions b;
  b.schedule_delay_ms = 1;
  b.export_timeout_ms = 600'000;  // the export alone would wait ten minutes
  Tracer tracer(&env, ExporterTo(receiver.endpoint()), b, nullptr);
  GlobalTracerScope global(&tracer);
  StartSpan("held").End();
  ASSERT_EQ(receiver.WaitFor([](const auto& s) { return !s.empty(); }).size(), 1u);
  StartSpan("queued").End();
  const auto start = Clock::now();
  tracer.Shutdown(200);
  const auto waited = Clock::now() - start;
  // Bounded by the shutdown's 200 ms plus one slice of the exporter's loop; the generous bound
  // only guards against a wait on the export's own ten minutes.
  EXPECT_LT(waited, std::chrono::seconds(10));
  EXPECT_EQ(tracer.failed(), 1u);
  EXPECT_EQ(tracer.dropped(), 1u);  // "queued" never got its turn
}

TEST(OtlpHttpUrlTest, ParsesHttpUrlsAndRefusesOthers) {
  auto u = ParseHttpUrl("http://collector.monitoring:4318/v1/traces");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "collector.monitoring");
  EXPECT_EQ(u->port, "4318");
  EXPECT_EQ(u->target, "/v1/traces");
  auto v6 = ParseHttpUrl("http://[::1]:4318");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->target, "/");
  auto bare = ParseHttpUrl("http://localhost");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->port, "80");
  for (const char* bad : {"https://c:4318/v1/traces", "c:4318", "http://:4318/", "http://c:0/",
                          "http://c:99999/", "http://c:x/", "http://u:p@c:4318/", "grpc://c"}) {
    EXPECT_EQ(ParseHttpUrl(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace agentckpt::tracing
