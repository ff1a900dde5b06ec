// A TypeScript agent traced with the official OpenTelemetry JS SDK (tests/tracing/ts_agent, npm
// packages pinned by its package-lock.json) calls a real sidecar with traceparent headers; both
// export to one loopback OTLP collector. The sidecar's spans join the agent's trace: same trace
// id, and each request's server span is the child of the agent's client span for that call.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>

#include "tests/sidecar/sidecar_test_env.h"
#include "tests/tracing/otlp_receiver.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;
using Spans = std::vector<ReceivedSpan>;

// Runs the agent with `env`; its stdout (and stderr) and exit code.
std::pair<std::string, int> RunAgent(const std::map<std::string, std::string>& env) {
  const char* src = std::getenv("AGENTCKPT_SOURCE_DIR");
  std::string cmd;
  for (const auto& [k, v] : env) cmd += k + "='" + v + "' ";
  cmd += "bash '" + std::string(src != nullptr ? src : ".") +
         "/tests/tracing/ts_agent/run_agent.sh' 2>&1";
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {"popen failed", -1};
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = ::pclose(p);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

class TsAgentTraceTest : public SidecarEnvTest {};

TEST_F(TsAgentTraceTest, TheSidecarsSpansJoinTheAgentsTrace) {
  OtlpReceiver receiver;
  auto sidecar = StartSidecar({{"OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()},
                               {"OTEL_SERVICE_NAME", "agentckpt-sidecar"},
                               {"OTEL_BSP_SCHEDULE_DELAY", "20"}});
  auto [out, code] = RunAgent({{"SIDECAR_URL", "http://127.0.0.1:" + std::to_string(port_)},
                               {"OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()},
                               {"OTEL_SERVICE_NAME", "ts-agent"},
                               {"AGENT_ID", kProcAgent}});
  ASSERT_EQ(code, 0) << out;
  json ids = json::parse(out.substr(out.rfind("\n{") == std::string::npos ? 0 : out.rfind("\n{")),
                         nullptr, false);
  ASSERT_TRUE(ids.is_object()) << out;
  const std::string trace = ids["traceId"];
  ASSERT_EQ(trace.size(), 32u);

  Spans spans = receiver.WaitFor([&trace](const Spans& all) {
    int agent = 0, sidecar = 0;
    for (const ReceivedSpan& s : all) {
      if (s.trace_id != trace) continue;
      agent += s.service == "ts-agent";
      // The last request's server span ends (and is exported) after everything before it.
      sidecar += s.service == "agentckpt-sidecar" && s.name == "POST /v1/checkpoints";
    }
    return agent == 3 && sidecar == 1;
  });
  auto find = [&spans](const std::string& service, const std::string& name) {
    const ReceivedSpan* found = nullptr;
    for (const ReceivedSpan& s : spans) {
      if (s.service == service && s.name == name) found = &s;
    }
    return found;
  };
  const ReceivedSpan* task = find("ts-agent", "agent.task");
  const ReceivedSpan* agent_post = find("ts-agent", "POST /v1/checkpoints");
  const ReceivedSpan* sidecar_put = find("agentckpt-sidecar", "PUT /v1/context");
  const ReceivedSpan* sidecar_post = find("agentckpt-sidecar", "POST /v1/checkpoints");
  const ReceivedSpan* write = find("agentckpt-sidecar", "agentckpt.checkpoint.write");
  ASSERT_NE(task, nullptr);
  ASSERT_NE(agent_post, nullptr);
  ASSERT_NE(sidecar_put, nullptr);
  ASSERT_NE(sidecar_post, nullptr);
  ASSERT_NE(write, nullptr);
  EXPECT_EQ(task->trace_id, trace);
  EXPECT_EQ(agent_post->parent_span_id, task->span_id);
  // One trace, agent and sidecar.
  EXPECT_EQ(sidecar_put->trace_id, trace);
  EXPECT_EQ(sidecar_post->trace_id, trace);
  EXPECT_EQ(write->trace_id, trace);
  EXPECT_EQ(sidecar_put->parent_span_id, ids["putSpanId"]);
  EXPECT_EQ(sidecar_post->parent_span_id, ids["postSpanId"]);
  EXPECT_EQ(agent_post->span_id, ids["postSpanId"]);
  EXPECT_EQ(write->parent_span_id, sidecar_post->span_id);
  EXPECT_EQ(write->Attr("agentckpt.checkpoint.id"), ids["checkpointId"]);
  // The agent's client span encloses the sidecar's server span.
  EXPECT_LE(agent_post->start_ns, sidecar_post->start_ns + 5'000'000);
  EXPECT_EQ(receiver.bad_bodies(), 0);
}

}  // namespace
}  // namespace agentckpt::testing
