// The web console in a real browser (docs/console.md): a real nats-server and `agentckpt run`
// write a SQLite store (checkpoints of every trigger, tool calls, a ledger call left open across
// a SIGKILL, JetStream inbox messages, a pending gate), then console_browser.mjs starts
// `agentckpt console` on that store and drives Debian's chromium (headless, puppeteer-core)
// through every view, comparing what the page shows with the CLI's own output.
#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/e2e/gate_test_base.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

constexpr char kArgs[] = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945";
constexpr char kToken[] = "console-test-token-6d1f";

class ConsoleBrowserTest : public GateTestBase {
 protected:
  json Call(const std::string& method, const std::string& path, const json& body,
            int expect) {
    HttpReply r = HttpCall(port_, method, path, body.is_null() ? "" : body.dump(),
                           method == "PATCH" ? "application/merge-patch+json" : "application/json");
    EXPECT_EQ(r.status, expect) << method << " " << path << ": " << r.body;
    return Body(r);
  }
  int64_t Checkpoint() {
    return Call("POST", "/v1/checkpoints", {{"trigger", "manual"}}, 201)["sequenceNumber"];
  }
  // Runs the browser script with `config` (a JSON file) and returns its exit code; its output
  // goes to *output.
  int RunBrowser(const json& config, std::string* output) {
    const std::string file = dir_.File("browser-config.json");
    std::ofstream(file) << config.dump(2);
    const std::string dir = std::string(std::getenv("AGENTCKPT_SOURCE_DIR")) + "/tests/console";
    std::string cmd = "cd '" + dir + "' && bash ./run_browser.sh '" + file + "' 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return -1;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) output->append(buf.data(), n);
    int status = ::pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
};

TEST_F(ConsoleBrowserTest, EveryViewShowsWhatTheStoreAndTheCliSay) {
  auto sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000)) << sidecar->Stdout();
  // A task in its first phase (a task_phase_change checkpoint), then manual checkpoints around
  // a tool call, a ledger call and a draft change.
  json context = {{"activeTask",
                   {{"taskId", "task-42"},
                    {"title", "Quarterly report"},
                    {"phase", "gathering"},
                    {"progress", 10},
                    {"startedAt", "2026-11-25T08:00:00.000Z"}}},
                  {"contextSummary",
                   {{"systemPromptHash", std::string(64, 'a')},
                    {"gatheringResults", "three sources found"},
                    {"planOutline", {"collect the figures", "draft the summary"}},
                    {"completedSteps", 1},
                    {"draftContent", "Revenue grew.\nCosts fell.\n"},
                    {"toolCallLog", json::array()}}}};
  Call("PUT", "/v1/context", context, 200);
  Call("PATCH", "/v1/context", {{"activeTask", {{"phase", "executing"}, {"progress", 40}}}}, 200);
  const int64_t n = Checkpoint();
  Call("POST", "/v1/tool-calls",
       {{"toolName", "sql_query_console"},
        {"timestamp", "2026-11-25T09:00:00.000Z"},
        {"inputSummary", "SELECT revenue FROM q3"},
        {"outputSummary", "4.2M"},
        {"durationMs", 120},
        {"success", true}},
       201);
  Call("PATCH", "/v1/context",
       {{"contextSummary",
         {{"planOutline", {"collect the figures", "draft the summary", "send for review"}},
          {"draftContent", "Revenue grew to 4.2M.\nCosts fell.\n"}}}},
       200);
  ASSERT_EQ(Checkpoint(), n + 1);
  // Inbox messages for the preview's replay.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(js_->Publish(std::string("inbox.") + kProcAgent + ".msg", "note " +
                             std::to_string(i)).ok());
  }
  Call("PATCH", "/v1/context", {{"activeTask", {{"phase", "reviewing"}, {"progress", 90}}}}, 200);
  // A write left open across a SIGKILL: outcome_unknown after the restart (a restore, seen in
  // the journal as the entries of a new writer epoch).
  Call("POST", "/v1/tool-calls/begin",
       {{"toolName", "send_email"}, {"effect", "write"}, {"argsSha256", kArgs},
        {"inputSummary", "to: cfo"}},
       201);
  EXPECT_EQ(sidecar->Signal(SIGKILL), 128 + SIGKILL);
  sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000)) << sidecar->Stdout();
  Call("POST", "/v1/gates",
       {{"gateId", "g-deploy"},
        {"reason", "publish the report"},
        {"toolCallId", "call-publish"},
        {"argsSha256", kArgs},
        {"request", {{"tool", "publish"}, {"channel", "board"}}}},
       201);

  const std::string token_file = dir_.File("token");
  std::ofstream(token_file) << kToken << "\n";
  json config = {{"bin", std::getenv("AGENTCKPT_BIN")},
                 {"store", "sqlite://" + dir_.File("store.db")},
                 {"nats", nats_->url()},
                 {"agent", kProcAgent},
                 {"sidecarPort", port_},
                 {"tokenFile", token_file},
                 {"token", kToken},
                 {"gateId", "g-deploy"},
                 {"seqN", n},
                 {"toolName", "sql_query_console"},
                 {"workDir", dir_.path()}};
  if (const char* shots = std::getenv("CONSOLE_SCREENSHOT_DIR")) config["screenshotDir"] = shots;
  std::string output;
  int code = RunBrowser(config, &output);
  EXPECT_EQ(code, 0) << output;
  std::printf("%s", output.c_str());
}

}  // namespace
}  // namespace agentckpt::testing
