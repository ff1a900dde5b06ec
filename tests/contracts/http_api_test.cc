// Every operation of docs/openapi.yaml called on a real sidecar process (good and bad requests,
// and store faults for the error answers), each answer checked against the document.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "tests/contracts/contract_support.h"
#include "tests/sidecar/sidecar_process.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

constexpr char kAgent[] = "contract-http";
constexpr char kToken[] = "contract-test-token-5b1e";

class HttpContractTest : public ::testing::Test {
 protected:
  // Calls the sidecar and records the exchange (expected to match the document).
  HttpExchange Call(const std::string& label, const std::string& method, const std::string& path,
                    const std::string& body = "", const std::string& content_type = "") {
    HttpExchange ex;
    ex.method = method;
    ex.path = path;
    ex.body = body;
    ex.content_type = content_type;
    if (send_token_) ex.request_headers["Authorization"] = "Bearer " + std::string(kToken);
    ex = Http(port_, ex);
    EXPECT_NE(ex.status, 0) << label << ": " << ex.response;
    Record(label, ex, true);
    return ex;
  }

  void Record(const std::string& label, const HttpExchange& ex, bool valid) {
    json headers = json::object();
    for (const auto& [k, v] : ex.headers) headers[k] = v;
    exchanges_.push_back({{"label", label},
                          {"method", ex.method},
                          {"path", ex.path},
                          {"status", ex.status},
                          {"headers", headers},
                          {"body", ex.response},
                          {"expect", valid ? "valid" : "invalid"}});
  }

  // Each method the path does not accept must answer 405 (with Allow).
  void NotAllowed(const std::string& path, std::initializer_list<const char*> methods) {
    for (const char* m : methods) {
      HttpExchange ex = Call(std::string(m) + " not allowed", m, path, m[0] == 'G' ? "" : "{}");
      EXPECT_EQ(ex.status, 405) << m << " " << path;
    }
  }

  int port_ = 0;
  bool send_token_ = true;
  json exchanges_ = json::array();
};

TEST_F(HttpContractTest, EveryOperationAnswersAsDocumented) {
  NatsServerProcess nats;
  TempDir dir;
  port_ = PickFreePort();
  const std::string db = dir.path() + "/store.db";
  const std::string token_file = dir.path() + "/token";
  std::ofstream(token_file) << kToken << "\n";
  SidecarProcess sidecar({{"AGENT_ID", kAgent},
                          {"CKPT_HTTP_TOKEN_FILE", token_file},
                          {"NATS_URL", nats.url()},
                          {"CKPT_STORE", "sqlite://" + db},
                          {"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(port_)},
                          {"CKPT_PERIOD_S", "3600"},
                          {"CKPT_HTTP_BODY_MAX_BYTES", "65536"}},
                         dir.path());
  ASSERT_TRUE(sidecar.WaitHealthy(port_)) << sidecar.Describe();

  // Probes.
  EXPECT_EQ(Call("health", "GET", "/healthz").status, 200);
  EXPECT_EQ(Call("ready", "GET", "/readyz").status, 200);
  EXPECT_EQ(Call("metrics", "GET", "/metrics").status, 200);
  for (const char* p : {"/healthz", "/readyz", "/metrics"})
    NotAllowed(p, {"PUT", "POST", "PATCH", "DELETE"});

  // Restore result before any restore ran (the store was empty at start).
  EXPECT_EQ(Call("no restoration yet", "GET", "/v1/restoration").status, 404);

  // Context.
  EXPECT_EQ(Call("empty context", "GET", "/v1/context").status, 200);
  EXPECT_EQ(
      Call("put fixture", "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
      200);
  EXPECT_EQ(Call("context", "GET", "/v1/context").status, 200);
  json bad = json::parse(FixtureContextBody("checkpoint-16k.json"));
  bad["activeTask"]["progress"] = 101;
  EXPECT_EQ(Call("put out of range", "PUT", "/v1/context", bad.dump()).status, 400);
  EXPECT_EQ(Call("put malformed", "PUT", "/v1/context", "{\"activeTask\":").status, 400);
  EXPECT_EQ(Call("put too large", "PUT", "/v1/context", std::string(70000, ' ')).status, 413);
  EXPECT_EQ(Call("patch phase", "PATCH", "/v1/context", R"({"activeTask":{"phase":"reviewing"}})",
                 "application/merge-patch+json")
                .status,
            200);
  EXPECT_EQ(Call("patch bad", "PATCH", "/v1/context", R"({"activeTask":{"progress":-1}})").status,
            400);
  NotAllowed("/v1/context", {"POST", "DELETE"});

  // Tool calls.
  const std::string call = R"({"toolName":"read_file","timestamp":"2026-11-03T02:40:00.000Z",)"
                           R"("inputSummary":"posts/a.md","outputSummary":"1,200 words",)"
                           R"("durationMs":12,"success":true})";
  EXPECT_EQ(Call("tool call", "POST", "/v1/tool-calls", call).status, 201);
  EXPECT_EQ(Call("tool call missing success", "POST", "/v1/tool-calls",
                 R"({"toolName":"x","timestamp":"2026-11-03T02:40:00.000Z","inputSummary":"",)"
                 R"("outputSummary":"","durationMs":1})")
                .status,
            400);
  NotAllowed("/v1/tool-calls", {"PUT", "PATCH", "DELETE"});

  // The tool-call ledger.
  const std::string args = std::string(64, 'a');
  HttpExchange begun = Call("begin", "POST", "/v1/tool-calls/begin",
                            R"({"toolName":"refund","effect":"write","argsSha256":")" + args +
                                R"(","inputSummary":"order 42"})");
  ASSERT_EQ(begun.status, 201) << begun.response;
  const std::string call_id = json::parse(begun.response)["callId"];
  EXPECT_EQ(Call("begin again (open)", "POST", "/v1/tool-calls/begin",
                 R"({"toolName":"refund","effect":"write","argsSha256":")" + args + R"("})")
                .status,
            409);
  EXPECT_EQ(Call("begin without key or args", "POST", "/v1/tool-calls/begin",
                 R"({"toolName":"refund","effect":"write"})")
                .status,
            400);
  EXPECT_EQ(Call("begin bad effect", "POST", "/v1/tool-calls/begin",
                 R"({"toolName":"refund","effect":"risky","idempotencyKey":"k"})")
                .status,
            400);
  EXPECT_EQ(Call("list started", "GET", "/v1/tool-calls?state=started").status, 200);
  EXPECT_EQ(Call("list bad state", "GET", "/v1/tool-calls?state=maybe").status, 400);
  EXPECT_EQ(
      Call("end", "POST", "/v1/tool-calls/" + call_id + "/end",
           R"({"success":true,"outputSummary":"refunded","durationMs":30,"externalId":"re_1"})")
          .status,
      200);
  EXPECT_EQ(
      Call("end twice", "POST", "/v1/tool-calls/" + call_id + "/end", R"({"success":true})").status,
      409);
  EXPECT_EQ(Call("end unknown", "POST", "/v1/tool-calls/nope/end", R"({"success":true})").status,
            404);
  EXPECT_EQ(Call("end without success", "POST", "/v1/tool-calls/" + call_id + "/end", "{}").status,
            400);
  EXPECT_EQ(Call("begin replayed", "POST", "/v1/tool-calls/begin",
                 R"({"toolName":"refund","effect":"write","argsSha256":")" + args + R"("})")
                .status,
            200);
  HttpExchange second = Call("begin keyed", "POST", "/v1/tool-calls/begin",
                             R"({"toolName":"mail","effect":"write","idempotencyKey":"m-1"})");
  ASSERT_EQ(second.status, 201) << second.response;
  const std::string second_id = json::parse(second.response)["callId"];
  EXPECT_EQ(Call("reconcile bad outcome", "POST", "/v1/tool-calls/" + second_id + "/reconcile",
                 R"({"outcome":"maybe"})")
                .status,
            400);
  EXPECT_EQ(Call("reconcile not executed", "POST", "/v1/tool-calls/" + second_id + "/reconcile",
                 R"({"outcome":"not_executed","note":"never sent"})")
                .status,
            200);
  EXPECT_EQ(
      Call("reconcile unknown", "POST", "/v1/tool-calls/nope/reconcile", R"({"outcome":"failed"})")
          .status,
      404);
  EXPECT_EQ(Call("list", "GET", "/v1/tool-calls").status, 200);
  NotAllowed("/v1/tool-calls/begin", {"GET", "PUT", "PATCH", "DELETE"});
  NotAllowed("/v1/tool-calls/" + call_id + "/end", {"GET", "PUT", "PATCH", "DELETE"});
  NotAllowed("/v1/tool-calls/" + call_id + "/reconcile", {"GET", "PUT", "PATCH", "DELETE"});

  // Approval gates.
  {
    const std::string args(64, 'd');
    const std::string gate = json{
        {"gateId", "http-gate"},
        {"reason", "delete the branch"},
        {"toolCallId", "call-3"},
        {"argsSha256", args},
        {"request",
         {{"branch", "old"}}}}.dump();
    EXPECT_EQ(Call("gate request", "POST", "/v1/gates", gate).status, 201);
    EXPECT_EQ(Call("gate request again", "POST", "/v1/gates", gate).status, 200);
    EXPECT_EQ(Call("gate request reused id", "POST", "/v1/gates",
                   R"({"gateId":"http-gate","reason":"other"})")
                  .status,
              409);
    EXPECT_EQ(Call("gate request without reason", "POST", "/v1/gates", "{}").status, 400);
    EXPECT_EQ(
        Call("gate request ttl", "POST", "/v1/gates", R"({"reason":"r","ttlSeconds":600})").status,
        201);
    EXPECT_EQ(Call("gates pending", "GET", "/v1/gates?state=pending").status, 200);
    EXPECT_EQ(Call("gates bad state", "GET", "/v1/gates?state=maybe").status, 400);
    EXPECT_EQ(Call("gate", "GET", "/v1/gates/http-gate").status, 200);
    EXPECT_EQ(Call("gate no wait", "GET", "/v1/gates/http-gate?waitSeconds=0").status, 200);
    EXPECT_EQ(Call("gate bad wait", "GET", "/v1/gates/http-gate?waitSeconds=9999").status, 400);
    EXPECT_EQ(Call("gate unknown", "GET", "/v1/gates/nope").status, 404);
    EXPECT_EQ(Call("gate consume pending", "POST", "/v1/gates/http-gate/consume").status, 409);
    EXPECT_EQ(Call("gate args mismatch", "POST", "/v1/gates/http-gate/resolve",
                   json{{"decision", "approved"}, {"by", "a"}, {"argsSha256", std::string(64, 'e')}}
                       .dump())
                  .status,
              409);
    const std::string approve =
        json{{"decision", "approved"}, {"by", "a"}, {"argsSha256", args}}.dump();
    EXPECT_EQ(Call("gate approve", "POST", "/v1/gates/http-gate/resolve", approve).status, 200);
    EXPECT_EQ(Call("gate approve again", "POST", "/v1/gates/http-gate/resolve", approve).status,
              200);
    EXPECT_EQ(Call("gate conflict", "POST", "/v1/gates/http-gate/resolve",
                   R"({"decision":"rejected","by":"b"})")
                  .status,
              409);
    EXPECT_EQ(Call("gate bad decision", "POST", "/v1/gates/http-gate/resolve",
                   R"({"decision":"perhaps","by":"b"})")
                  .status,
              400);
    EXPECT_EQ(Call("gate resolve unknown", "POST", "/v1/gates/nope/resolve",
                   R"({"decision":"rejected","by":"b"})")
                  .status,
              404);
    EXPECT_EQ(Call("gate consume", "POST", "/v1/gates/http-gate/consume").status, 200);
    EXPECT_EQ(Call("gate consume unknown", "POST", "/v1/gates/nope/consume").status, 404);
    NotAllowed("/v1/gates", {"PUT", "PATCH", "DELETE"});
    NotAllowed("/v1/gates/http-gate", {"PUT", "POST", "PATCH", "DELETE"});
    NotAllowed("/v1/gates/http-gate/resolve", {"GET", "PUT", "PATCH", "DELETE"});
    NotAllowed("/v1/gates/http-gate/consume", {"GET", "PUT", "PATCH", "DELETE"});
  }

  // Checkpoints.
  HttpExchange created = Call("create (empty body)", "POST", "/v1/checkpoints");
  ASSERT_EQ(created.status, 201) << created.response;
  EXPECT_EQ(Call("create pre_compaction", "POST", "/v1/checkpoints",
                 R"({"trigger":"pre_compaction","taskId":"task-4521"})")
                .status,
            201);
  EXPECT_EQ(Call("create periodic", "POST", "/v1/checkpoints", R"({"trigger":"periodic"})").status,
            400);
  HttpExchange unknown_field =
      Call("create unknown field", "POST", "/v1/checkpoints", R"({"force":true})");
  EXPECT_EQ(unknown_field.status, 400);
  EXPECT_EQ(json::parse(unknown_field.response, nullptr, false)["error"].value("field", ""),
            "force")
      << unknown_field.response;
  HttpExchange not_object = Call("create not an object", "POST", "/v1/checkpoints", "[1]");
  EXPECT_EQ(not_object.status, 400);
  EXPECT_NE(not_object.response.find(R"("field":"")"), std::string::npos) << not_object.response;
  EXPECT_EQ(Call("list", "GET", "/v1/checkpoints").status, 200);
  EXPECT_EQ(Call("list limit 2", "GET", "/v1/checkpoints?limit=2").status, 200);
  EXPECT_EQ(Call("list limit 0", "GET", "/v1/checkpoints?limit=0").status, 400);
  NotAllowed("/v1/checkpoints", {"PUT", "PATCH", "DELETE"});
  const std::string id = json::parse(created.response)["checkpointId"].get<std::string>();
  EXPECT_EQ(Call("get", "GET", "/v1/checkpoints/" + id).status, 200);
  EXPECT_EQ(
      Call("get absent", "GET", "/v1/checkpoints/00000000-0000-4000-8000-000000000000").status,
      404);
  NotAllowed("/v1/checkpoints/" + id, {"PUT", "POST", "PATCH", "DELETE"});

  // Restore.
  EXPECT_EQ(Call("restore", "POST", "/v1/restore").status, 200);
  EXPECT_EQ(Call("restoration", "GET", "/v1/restoration").status, 200);
  EXPECT_EQ(Call("agent start", "POST", "/v1/agent-start").status, 200);
  NotAllowed("/v1/restore", {"GET", "PUT", "PATCH", "DELETE"});
  NotAllowed("/v1/agent-start", {"GET", "PUT", "PATCH", "DELETE"});
  NotAllowed("/v1/restoration", {"PUT", "POST", "PATCH", "DELETE"});

  // Without the bearer token: every /v1/ operation answers 401; the probes stay open.
  send_token_ = false;
  const std::string cp = "/v1/checkpoints/" + id;
  for (const char* m : {"GET", "PUT", "PATCH", "POST", "DELETE"}) {
    for (const std::string p : {"/v1/context", "/v1/tool-calls", "/v1/checkpoints", cp.c_str(),
                                "/v1/restore", "/v1/agent-start", "/v1/restoration"}) {
      EXPECT_EQ(Call("no token", m, p, m[0] == 'G' ? "" : "{}").status, 401) << m << " " << p;
    }
  }
  for (const char* p : {"/healthz", "/readyz", "/metrics"}) {
    EXPECT_EQ(Call("probe without token", "GET", p).status, 200) << p;
  }
  send_token_ = true;

  // Store faults, through a second connection to the sidecar's database file.
  {
    SqliteFaults faults(db);
    ASSERT_EQ(faults.Exec("CREATE TRIGGER contract_refuse BEFORE INSERT ON checkpoints "
                          "BEGIN SELECT RAISE(ABORT, 'refused by the contract test'); END"),
              "");
    EXPECT_EQ(Call("create refused", "POST", "/v1/checkpoints").status, 409);
    ASSERT_EQ(faults.Exec("DROP TRIGGER contract_refuse"), "");
    ASSERT_EQ(faults.Exec("ALTER TABLE checkpoints RENAME TO checkpoints_away"), "");
    EXPECT_EQ(Call("restore, store unreadable", "POST", "/v1/restore").status, 500);
    EXPECT_EQ(Call("list, store unreadable", "GET", "/v1/checkpoints").status, 500);
    ASSERT_EQ(faults.Exec("ALTER TABLE checkpoints_away RENAME TO checkpoints"), "");
    ASSERT_EQ(faults.Exec("UPDATE checkpoints SET content_sha256 = '" + std::string(64, '0') +
                          "' WHERE checkpoint_id = '" + id + "'"),
              "");
    EXPECT_EQ(Call("get corrupted", "GET", "/v1/checkpoints/" + id).status, 500);
    // A write lock held past the store's busy timeout (5 s).
    ASSERT_EQ(faults.Exec("BEGIN IMMEDIATE"), "");
    EXPECT_EQ(Call("create, store locked", "POST", "/v1/checkpoints").status, 503);
    ASSERT_EQ(faults.Exec("COMMIT"), "");
  }

  // NATS gone: not ready.
  nats.Kill();
  HttpExchange ready;
  for (int i = 0; i < 500; ++i) {
    ready.method = "GET";
    ready.path = "/readyz";
    ready = Http(port_, ready);
    if (ready.status == 503) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(ready.status, 503) << ready.response;
  Record("not ready", ready, true);

  // Negative checks: answers the document does not allow must be rejected.
  HttpExchange teapot = ready;
  teapot.path = "/healthz";
  teapot.status = 418;
  Record("undocumented status", teapot, false);
  auto raw = [&](const char* method, const char* path) {
    HttpExchange ex;
    ex.method = method;
    ex.path = path;
    ex.request_headers["Authorization"] = "Bearer " + std::string(kToken);
    return Http(port_, ex);
  };
  HttpExchange unknown = raw("GET", "/v1/agents");
  EXPECT_EQ(unknown.status, 404);
  Record("undocumented path", unknown, false);
  HttpExchange no_allow = raw("DELETE", "/v1/context");
  EXPECT_EQ(no_allow.status, 405);
  no_allow.headers.erase("Allow");
  Record("405 without Allow", no_allow, false);
  HttpExchange wrong_body = raw("GET", "/healthz");
  wrong_body.response = R"({"status":"fine"})";
  Record("body off the schema", wrong_body, false);

  std::string path = dir.path() + "/http-exchanges.json";
  ASSERT_TRUE(WriteJsonFile(path, exchanges_));
  ValidatorRun run = RunValidator("http.mjs", path);
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

// A document that is not valid OpenAPI is rejected.
TEST(HttpContractDocumentTest, InvalidDocumentIsRejected) {
  TempDir dir;
  const char* src = std::getenv("AGENTCKPT_SOURCE_DIR");
  std::ifstream in(std::string(src != nullptr ? src : ".") + "/docs/openapi.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // A response code that is not an HTTP status.
  size_t at = text.find("\"200\":");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 6, "\"2000\":");
  std::string broken = dir.path() + "/openapi.yaml";
  std::ofstream(broken) << text;
  std::string empty = dir.path() + "/none.json";
  ASSERT_TRUE(WriteJsonFile(empty, json::array()));
  ValidatorRun run = RunValidator("http.mjs", empty, {{"AGENTCKPT_OPENAPI", broken}});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("is not valid OpenAPI"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace agentckpt::testing
