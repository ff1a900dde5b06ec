// The Grafana dashboard (k8s/monitoring/agentckpt-dashboard.json) against a real Prometheus
// (Debian's package) scraping a real sidecar every second: a real nats-server, a SQLite store,
// the `agentckpt` binary SIGKILLed and restarted (a real restore of its checkpoint), then real
// work through the HTTP API and NATS (a journal write, checkpoints, a tool call begun and ended,
// gates, a restore, a rejected checkpoint request). Every panel's query, read from the JSON with
// its variables filled in (the variables' own label_values queries included), must return data:
// at least one finite value over the run. Waits are bounded polls on conditions.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "nats/subjects.h"
#include "tests/observability/prometheus_process.h"
#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

constexpr char kArgs[] = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945";
// $__rate_interval as Grafana sets it for a 1 s scrape interval, with room to spare.
constexpr char kRateInterval[] = "15s";

json Body(const HttpReply& r) { return json::parse(r.body, nullptr, false); }

// Polls `done` every 100 ms until it holds (true) or `timeout_ms` passes (false).
bool WaitFor(const std::function<bool()>& done, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

json LoadDashboard() {
  std::ifstream in(std::string(std::getenv("AGENTCKPT_SOURCE_DIR")) +
                   "/k8s/monitoring/agentckpt-dashboard.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return json::parse(text, nullptr, false);
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// One query of a panel: where it comes from and its expression with the variables filled in.
struct PanelQuery {
  std::string where;
  std::string expr;
};

class DashboardPrometheusTest : public SidecarEnvTest {
 protected:
  std::string Unix(std::chrono::system_clock::time_point t) {
    return std::to_string(
        std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() /
        1000.0);
  }

  // The values of every series of a range query over the run, flattened ("NaN" included).
  std::vector<double> RangeValues(const std::string& expr, std::string* error) {
    auto data = prometheus_->Api("query_range", {{"query", expr},
                                                 {"start", Unix(start_)},
                                                 {"end", Unix(std::chrono::system_clock::now())},
                                                 {"step", "1"}});
    std::vector<double> values;
    if (!data.ok()) {
      *error = data.status().ToString();
      return values;
    }
    for (const json& series : (*data)["result"]) {
      for (const json& point : series["values"])
        values.push_back(std::stod(point[1].get<std::string>()));
    }
    return values;
  }

  // An instant query's single value (NaN when it returns no or several series).
  double Instant(const std::string& expr) {
    auto data = prometheus_->Api("query", {{"query", expr}});
    if (!data.ok() || (*data)["result"].size() != 1) return std::nan("");
    return std::stod((*data)["result"][0]["value"][1].get<std::string>());
  }

  // label_values(SELECTOR, LABEL) through /api/v1/series, as Grafana's data source does.
  std::vector<std::string> LabelValues(const std::string& query) {
    static const std::regex kLabelValues(R"(^label_values\((.+),\s*([a-zA-Z_]+)\)$)");
    std::smatch m;
    if (!std::regex_match(query, m, kLabelValues)) return {};
    auto data = prometheus_->Api("series", {{"match[]", m[1].str()}, {"start", Unix(start_)}});
    std::vector<std::string> values;
    if (!data.ok()) return values;
    for (const json& labels : *data) {
      std::string v = labels.value(m[2].str(), "");
      if (!v.empty() && std::find(values.begin(), values.end(), v) == values.end()) {
        values.push_back(v);
      }
    }
    return values;
  }

  std::chrono::system_clock::time_point start_ = std::chrono::system_clock::now();
  std::unique_ptr<PrometheusProcess> prometheus_;
};

TEST_F(DashboardPrometheusTest, EveryPanelQueryReturnsDataFromARealSidecar) {
  json dashboard = LoadDashboard();
  ASSERT_TRUE(dashboard.is_object()) << "k8s/monitoring/agentckpt-dashboard.json does not parse";
  auto ready = [this] { return HttpCall(port_, "GET", "/readyz").status == 200; };

  // First life: a checkpoint, inbox messages after it, a tool call begun and never ended.
  auto first = StartSidecar();
  ASSERT_TRUE(WaitFor(ready, 15000)) << first->Stderr();
  auto put = HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json"));
  ASSERT_EQ(put.status, 200) << put.body;
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"manual"})").status, 201);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        js_->Publish(std::string("inbox.") + kProcAgent + ".user", "message " + std::to_string(i))
            .ok());
  }
  json begin = {{"toolName", "refund"},
                {"effect", "write"},
                {"idempotencyKey", "refund-42"},
                {"argsSha256", kArgs}};
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/tool-calls/begin", begin.dump()).status, 201);
  ASSERT_EQ(first->Signal(SIGKILL), 128 + SIGKILL);
  first.reset();

  // Prometheus scrapes the sidecar's port every second, with the labels the PodMonitor adds.
  prometheus_ = std::make_unique<PrometheusProcess>(
      "  - job_name: agentckpt\n    static_configs:\n      - targets: ['127.0.0.1:" +
      std::to_string(port_) +
      "']\n        labels: {namespace: agents, pod: agent-proc-0, agent: " + kProcAgent + "}\n");
  Status started = prometheus_->Start();
  ASSERT_TRUE(started.ok()) << started.ToString();

  // Second life: restores the checkpoint at start (the call is now outcome_unknown).
  auto second = StartSidecar({{"CKPT_RESTORE_ON_START", "true"}, {"CKPT_PERIOD_S", "1"}});
  ASSERT_TRUE(WaitFor(ready, 15000)) << second->Stderr();
  // The work below must fall between scrapes, so that rates see it: first wait for one.
  ASSERT_TRUE(WaitFor([&] { return Instant("agentckpt_build_info") == 1; }, 60000))
      << prometheus_->Log();

  auto patch = HttpCall(port_, "PATCH", "/v1/context",
                        R"({"activeTask":{"phase":"reviewing","progress":90}})",
                        "application/merge-patch+json");
  ASSERT_EQ(patch.status, 200) << patch.body;
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"manual"})").status, 201);
  begin["idempotencyKey"] = "email-7";
  begin["toolName"] = "email";
  auto begun = HttpCall(port_, "POST", "/v1/tool-calls/begin", begin.dump());
  ASSERT_EQ(begun.status, 201) << begun.body;
  auto ended =
      HttpCall(port_, "POST", "/v1/tool-calls/" + Body(begun)["callId"].get<std::string>() + "/end",
               json{{"success", true}, {"outputSummary", "sent"}}.dump());
  ASSERT_EQ(ended.status, 200) << ended.body;
  for (const char* id : {"g-approved", "g-pending"}) {
    json gate = {{"gateId", id}, {"reason", "deploy to production"}, {"argsSha256", kArgs}};
    ASSERT_EQ(HttpCall(port_, "POST", "/v1/gates", gate.dump()).status, 201);
  }
  auto resolved =
      HttpCall(port_, "POST", "/v1/gates/g-approved/resolve",
               json{{"decision", "approved"}, {"by", "alice"}, {"argsSha256", kArgs}}.dump());
  ASSERT_EQ(resolved.status, 200) << resolved.body;
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/restore").status, 200);
  // A checkpoint request over NATS with a member the API does not know: refused and counted.
  json refused = Request(subjects::CheckpointCreate(kProcAgent), R"({"bogus":1})");
  ASSERT_TRUE(refused.contains("error")) << refused.dump();

  // The variables, in order, each from its label_values query.
  std::map<std::string, std::string> vars = {{"$__rate_interval", kRateInterval}};
  for (const json& v : dashboard["templating"]["list"]) {
    if (v["type"] != "query") continue;
    std::string query = v["query"]["query"];
    for (const auto& [name, value] : vars) query = Replace(query, name, value);
    std::vector<std::string> values;
    ASSERT_TRUE(WaitFor([&] { return !(values = LabelValues(query)).empty(); }, 30000))
        << "variable " << v["name"] << ": " << query << " returns nothing";
    vars["$" + v["name"].get<std::string>()] = values[0];
  }
  EXPECT_EQ(vars["$namespace"], "agents");
  EXPECT_EQ(vars["$agent"], kProcAgent);

  std::vector<PanelQuery> queries;
  for (const json& panel : dashboard["panels"]) {
    if (panel["type"] == "row") continue;
    for (const json& target : panel["targets"]) {
      std::string expr = target["expr"];
      for (const auto& [name, value] : vars) expr = Replace(expr, name, value);
      ASSERT_EQ(expr.find('$'), std::string::npos) << "unknown variable in " << expr;
      queries.push_back(
          {panel["title"].get<std::string>() + " / " + target["refId"].get<std::string>(), expr});
    }
  }
  ASSERT_GE(queries.size(), 20u);

  // Every query gets a finite value once Prometheus has scraped the work above.
  std::vector<std::string> missing;
  bool all = WaitFor(
      [&] {
        missing.clear();
        for (const PanelQuery& q : queries) {
          std::string error;
          auto values = RangeValues(q.expr, &error);
          if (std::none_of(values.begin(), values.end(),
                           [](double x) { return std::isfinite(x); })) {
            missing.push_back(q.where + ": " + q.expr + (error.empty() ? "" : " (" + error + ")"));
          }
        }
        return missing.empty();
      },
      90000);
  std::string list;
  for (const std::string& m : missing) list += "\n  " + m;
  EXPECT_TRUE(all) << "panels without data:" << list << "\nprometheus log:\n" << prometheus_->Log();

  // And the figures say what happened.
  const std::string sel = std::string("{agent=\"") + kProcAgent + "\"}";
  EXPECT_EQ(Instant("agentckpt_gates_pending" + sel), 1);
  EXPECT_EQ(Instant("agentckpt_ledger_outcome_unknown_calls" + sel), 1);
  EXPECT_GT(Instant("agentckpt_last_restore_duration_seconds" + sel), 0);
  EXPECT_EQ(
      Instant(
          "max_over_time(agentckpt_checkpoint_failures_total{reason=\"invalid_argument\"}[5m])"),
      1);
  EXPECT_GE(Instant("max_over_time(agentckpt_journal_entries_total{kind=\"gate.resolve\"}[5m])"),
            1);
  EXPECT_GE(Instant("max_over_time(agentckpt_checkpoints_total{trigger=\"manual\"}[5m])"), 1);
  prometheus_->Stop();
  EXPECT_EQ(second->Signal(SIGTERM), 0) << second->Stderr();
}

}  // namespace
}  // namespace agentckpt::testing
