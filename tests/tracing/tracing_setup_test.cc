// The tracer's settings from the standard OTEL_* variables.
#include "tracing/tracing_setup.h"

#include <gtest/gtest.h>

#include <map>

namespace agentckpt::tracing {
namespace {

struct Vars {
  std::map<std::string, std::string> values;
  std::vector<std::string> warnings;
  std::optional<TracingSettings> Read() {
    return TracingSettingsFrom(
        [this](const std::string& name) -> std::optional<std::string> {
          auto it = values.find(name);
          if (it == values.end()) return std::nullopt;
          return it->second;
        },
        [this](const std::string& message, const nlohmann::json& fields) {
          warnings.push_back(message + " " + fields.dump());
        });
  }
};

std::string Resource(const TracingSettings& s, const std::string& key) {
  for (const auto& [k, v] : s.exporter.resource.attributes) {
    if (k == key) return v;
  }
  return "<absent>";
}

TEST(TracingSetupTest, OffWithoutAnEndpoint) {
  Vars v;
  v.values = {{"OTEL_SERVICE_NAME", "x"}, {"OTEL_RESOURCE_ATTRIBUTES", "a=b"}};
  EXPECT_FALSE(v.Read().has_value());
}

TEST(TracingSetupTest, TheGeneralEndpointGetsTheTracesPath) {
  Vars v;
  v.values = {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"}};
  auto s = v.Read();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->exporter.endpoint, "http://collector:4318/v1/traces");
  v.values["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://collector:4318/base/";
  EXPECT_EQ(v.Read()->exporter.endpoint, "http://collector:4318/base/v1/traces");
  // The traces endpoint is used as it is, and wins.
  v.values["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = "http://other:9999/custom";
  EXPECT_EQ(v.Read()->exporter.endpoint, "http://other:9999/custom");
  EXPECT_EQ(Resource(*v.Read(), "service.name"), "agentckpt");
}

TEST(TracingSetupTest, ServiceNameAndResourceAttributes) {
  Vars v;
  v.values = {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
              {"OTEL_RESOURCE_ATTRIBUTES",
               "service.name=from-attrs, k8s.pod.name = pod%2D1 ,deployment.environment=prod,bad"}};
  auto s = v.Read();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(Resource(*s, "service.name"), "from-attrs");
  EXPECT_EQ(Resource(*s, "k8s.pod.name"), "pod-1");
  EXPECT_EQ(Resource(*s, "deployment.environment"), "prod");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("bad"), std::string::npos);
  v.values["OTEL_SERVICE_NAME"] = "agent-7-sidecar";
  s = v.Read();
  EXPECT_EQ(Resource(*s, "service.name"), "agent-7-sidecar");
  // service.name appears once, first.
  EXPECT_EQ(s->exporter.resource.attributes[0].first, "service.name");
  int names = 0;
  for (const auto& [k, val] : s->exporter.resource.attributes) names += k == "service.name";
  EXPECT_EQ(names, 1);
}

TEST(TracingSetupTest, HeadersTimeoutsAndBatchSettings) {
  Vars v;
  v.values = {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
              {"OTEL_EXPORTER_OTLP_HEADERS", "api-key=general,x-tenant=t1"},
              {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "API-KEY=traces"},
              {"OTEL_EXPORTER_OTLP_TIMEOUT", "2500"},
              {"OTEL_BSP_SCHEDULE_DELAY", "50"},
              {"OTEL_BSP_MAX_QUEUE_SIZE", "100"},
              {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "-3"}};
  auto s = v.Read();
  ASSERT_TRUE(s.has_value());
  std::map<std::string, std::string> headers(s->exporter.headers.begin(),
                                             s->exporter.headers.end());
  EXPECT_EQ(headers.size(), 2u);
  EXPECT_EQ(headers["API-KEY"], "traces");
  EXPECT_EQ(headers["x-tenant"], "t1");
  EXPECT_EQ(s->batch.export_timeout_ms, 2500);
  EXPECT_EQ(s->batch.schedule_delay_ms, 50);
  EXPECT_EQ(s->batch.max_queue, 100u);
  EXPECT_EQ(s->batch.max_batch, BatchOptions{}.max_batch);  // -3 ignored, with a warning
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"), std::string::npos);
}

TEST(TracingSetupTest, DisabledByTheStandardSwitches) {
  Vars v;
  v.values = {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_SDK_DISABLED", "TRUE"}};
  EXPECT_FALSE(v.Read().has_value());
  v.values = {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_TRACES_EXPORTER", "none"}};
  EXPECT_FALSE(v.Read().has_value());
  v.values["OTEL_TRACES_EXPORTER"] = "otlp";
  EXPECT_TRUE(v.Read().has_value());
}

TEST(TracingSetupTest, AnUnusableEndpointLeavesTracingOffAndSaysWhy) {
  std::vector<std::string> said;
  auto tracer = TracerFromEnvironment(
      Env::Default(),
      [](const std::string& name) -> std::optional<std::string> {
        if (name == "OTEL_EXPORTER_OTLP_ENDPOINT") return "https://collector:4318";
        return std::nullopt;
      },
      [&said](const std::string& m, const nlohmann::json& f) { said.push_back(m + f.dump()); });
  EXPECT_EQ(tracer, nullptr);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("only http://"), std::string::npos) << said[0];
}

TEST(TracingSetupTest, KeyValueListsTrimAndDecode) {
  std::string bad;
  auto kv = ParseKeyValueList(" a = 1 ,,b=x%3Dy, =no ,c=", &bad);
  ASSERT_EQ(kv.size(), 3u);
  EXPECT_EQ(kv[0], std::make_pair(std::string("a"), std::string("1")));
  EXPECT_EQ(kv[1], std::make_pair(std::string("b"), std::string("x=y")));
  EXPECT_EQ(kv[2], std::make_pair(std::string("c"), std::string("")));
  EXPECT_EQ(bad, "=no");
}

}  // namespace
}  // namespace agentckpt::tracing
