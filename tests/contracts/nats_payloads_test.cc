// Every kind of message the sidecar sends or answers on NATS, captured from a real sidecar
// process on a real nats-server, validated against docs/schemas/ with ajv (draft 2020-12).
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "nats/subjects.h"
#include "tests/contracts/contract_support.h"
#include "tests/sidecar/sidecar_process.h"
#include "tests/support/fixtures.h"
#include "tests/support/jetstream_fixture.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

constexpr char kAgent[] = "contract-agent";
constexpr char kStream[] = "CONTRACT_INBOX";

json Entry(const std::string& label, const std::string& schema, const std::string& payload,
           bool valid) {
  return {{"label", label},
          {"schema", schema},
          {"payload", payload},
          {"expect", valid ? "valid" : "invalid"}};
}

// The schema of each subject the sidecar uses under agent.{id}.
std::map<std::string, std::string> SchemaBySubject() {
  return {{subjects::CheckpointCreate(kAgent), "checkpoint-create-request"},
          {subjects::CheckpointRestore(kAgent), "checkpoint-restore-request"},
          {subjects::CheckpointCreated(kAgent), "checkpoint-created"},
          {subjects::CheckpointFailed(kAgent), "checkpoint-failed"},
          {subjects::CheckpointRestored(kAgent), "checkpoint-restored"},
          {subjects::Status(kAgent), "agent-status"},
          {subjects::GateResolve(kAgent), "gate-resolve-request"},
          {subjects::GateRequested(kAgent), "gate"},
          {subjects::GateResolved(kAgent), "gate"},
          {subjects::GateConsumed(kAgent), "gate"}};
}

TEST(NatsPayloadContractTest, EveryMessageMatchesItsSchema) {
  NatsServerProcess nats;
  TempDir dir;
  const std::string subj = subjects::AgentPrefix(kAgent);

  auto js = JetStreamTestClient::Connect(nats.url());
  ASSERT_TRUE(js.ok()) << js.status().ToString();
  ASSERT_TRUE((*js)->CreateStream(kStream, {std::string("inbox.") + kAgent + ".>"}).ok());
  ASSERT_TRUE((*js)->CreateDurablePullConsumer(kStream, kAgent, "").ok());
  auto seqs = (*js)->PublishN(std::string("inbox.") + kAgent + ".task", 4, "job ");
  ASSERT_TRUE(seqs.ok()) << seqs.status().ToString();
  ASSERT_TRUE((*js)->FetchAndAckThrough(kStream, kAgent, (*seqs)[1]).ok());

  NatsCapture capture;
  ASSERT_EQ(capture.Start(nats.url(), subj + ">"), "");

  const int port = PickFreePort();
  const std::string db = dir.path() + "/store.db";
  SidecarProcess sidecar({{"AGENT_ID", kAgent},
                          {"NATS_URL", nats.url()},
                          {"CKPT_STORE", "sqlite://" + db},
                          {"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(port)},
                          {"CKPT_PERIOD_S", "3600"},
                          {"JS_STREAM", kStream},
                          {"JS_CONSUMER", kAgent}},
                         dir.path());
  ASSERT_TRUE(sidecar.WaitHealthy(port)) << sidecar.Describe();

  json manifest = json::array();
  std::set<std::string> bad_requests;  // request payloads the sidecar must reject
  auto request = [&](const std::string& suffix, const std::string& payload,
                     const std::string& reply_schema, bool reply_valid,
                     const std::string& label) -> std::string {
    bool ok = false;
    std::string reply = capture.Request(subj + suffix, payload, 15000, &ok);
    EXPECT_TRUE(ok) << label << ": " << reply;
    if (!ok) return "";
    manifest.push_back(Entry("reply to " + label, reply_schema, reply, reply_valid));
    return reply;
  };

  // A task_phase_change checkpoint through the HTTP context intake.
  HttpReply put = HttpCall(port, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json"));
  ASSERT_EQ(put.status, 200) << put.body;
  // Creates over NATS: good ones, an empty message, and rejected ones.
  request("checkpoint.create", R"({"trigger":"manual","taskId":"task-4521"})",
          "checkpoint-create-reply", true, "create manual");
  request("checkpoint.create", R"({"trigger":"pre_compaction"})", "checkpoint-create-reply", true,
          "create pre_compaction");
  request("checkpoint.create", "", "checkpoint-create-reply", true, "create (empty)");
  // Each rejected request is answered with the offending field and announced on
  // checkpoint.failed (with the same field) before the reply.
  const std::map<std::string, std::string> field_of_bad = {{R"({"trigger":"periodic"})", "trigger"},
                                                           {R"({"taskId":17})", "taskId"},
                                                           {"not json", ""},
                                                           {R"({"force":true})", "force"}};
  for (const auto& [bad, field] : field_of_bad) {
    bad_requests.insert(bad);
    size_t failed_before = capture.Count(subj + "checkpoint.failed");
    std::string reply =
        request("checkpoint.create", bad, "checkpoint-create-reply", true, "create " + bad);
    json error = json::parse(reply, nullptr, false);
    ASSERT_TRUE(error.is_object() && error.contains("error")) << reply;
    EXPECT_EQ(error["error"].value("code", ""), "INVALID_ARGUMENT") << reply;
    EXPECT_EQ(error["error"].value("field", "(none)"), field) << reply;
    ASSERT_TRUE(capture.WaitFor(subj + "checkpoint.failed", failed_before + 1, 5000)) << bad;
    json event;  // the newest checkpoint.failed
    for (const CapturedMessage& m : capture.Messages()) {
      if (m.subject == subj + "checkpoint.failed") event = json::parse(m.data, nullptr, false);
    }
    EXPECT_EQ(event.value("operation", ""), "checkpoint") << event.dump();
    EXPECT_EQ(event.value("trigger", ""), "manual") << event.dump();
    EXPECT_EQ(event.value("field", "(none)"), field) << event.dump();
    EXPECT_EQ(event.value("reason", "").rfind("INVALID_ARGUMENT: ", 0), 0u) << event.dump();
  }
  // A rejected request that asked for pre_compaction is announced with that trigger.
  {
    const std::string bad = R"({"trigger":"pre_compaction","taskId":false})";
    bad_requests.insert(bad);
    size_t failed_before = capture.Count(subj + "checkpoint.failed");
    request("checkpoint.create", bad, "checkpoint-create-reply", true, "create " + bad);
    ASSERT_TRUE(capture.WaitFor(subj + "checkpoint.failed", failed_before + 1, 5000));
    json event;
    for (const CapturedMessage& m : capture.Messages()) {
      if (m.subject == subj + "checkpoint.failed") event = json::parse(m.data, nullptr, false);
    }
    EXPECT_EQ(event.value("trigger", ""), "pre_compaction") << event.dump();
    EXPECT_EQ(event.value("field", ""), "taskId") << event.dump();
  }
  // A create over HTTP.
  HttpReply post = HttpCall(port, "POST", "/v1/checkpoints", R"({"trigger":"manual"})");
  ASSERT_EQ(post.status, 201) << post.body;
  // Restores over NATS and HTTP.
  request("checkpoint.restore", "", "checkpoint-restore-reply", true, "restore (empty)");
  request("checkpoint.restore", "{}", "checkpoint-restore-reply", true, "restore {}");
  HttpReply restore = HttpCall(port, "POST", "/v1/restore");
  ASSERT_EQ(restore.status, 200) << restore.body;
  manifest.push_back(Entry("POST /v1/restore", "restore-result", restore.body, true));

  // An approval gate: requested over HTTP (gate.requested, status suspended), resolved over NATS
  // (gate.resolved, status active), resolved again (same answer) and in conflict (the error with
  // the first decision), consumed over HTTP (gate.consumed); and a request for an unknown gate.
  {
    const std::string args(64, 'c');
    HttpReply gate = HttpCall(port, "POST", "/v1/gates",
                              json{{"gateId", "contract-gate"},
                                   {"reason", "send the report"},
                                   {"argsSha256", args},
                                   {"request", {{"to", "ops"}}}}
                                  .dump());
    ASSERT_EQ(gate.status, 201) << gate.body;
    json approve = {{"gateId", "contract-gate"},
                    {"decision", "approved"},
                    {"by", "alice"},
                    {"argsSha256", args},
                    {"response", {{"note", "fine"}}}};
    request("gate.resolve", approve.dump(), "gate-resolve-reply", true, "gate approve");
    request("gate.resolve", approve.dump(), "gate-resolve-reply", true, "gate approve again");
    json reject = {{"gateId", "contract-gate"}, {"decision", "rejected"}, {"by", "bob"}};
    std::string conflict =
        request("gate.resolve", reject.dump(), "gate-resolve-reply", true, "gate conflict");
    EXPECT_NE(conflict.find("\"CONFLICT\""), std::string::npos) << conflict;
    json unknown = {{"gateId", "no-such-gate"}, {"decision", "rejected"}, {"by", "bob"}};
    request("gate.resolve", unknown.dump(), "gate-resolve-reply", true, "gate unknown");
    ASSERT_EQ(HttpCall(port, "POST", "/v1/gates/contract-gate/consume").status, 200);
    manifest.push_back(Entry("GET /v1/gates/{id}", "gate",
                             HttpCall(port, "GET", "/v1/gates/contract-gate").body, true));
    ASSERT_TRUE(capture.WaitFor(subj + "gate.consumed", 1, 5000));
  }

  // A checkpoint the store refuses (checkpoint.failed, operation checkpoint).
  {
    SqliteFaults faults(db);
    ASSERT_EQ(faults.Exec("CREATE TRIGGER contract_refuse BEFORE INSERT ON checkpoints "
                          "BEGIN SELECT RAISE(ABORT, 'refused by the contract test'); END"),
              "");
    std::string reply = request("checkpoint.create", R"({"trigger":"manual"})",
                                "checkpoint-create-reply", true, "create (store refuses)");
    EXPECT_NE(reply.find("\"error\""), std::string::npos) << reply;
    ASSERT_EQ(faults.Exec("DROP TRIGGER contract_refuse"), "");
    // A restore that cannot read the store (checkpoint.failed, operation restore).
    ASSERT_EQ(faults.Exec("ALTER TABLE checkpoints RENAME TO checkpoints_away"), "");
    reply = request("checkpoint.restore", "", "checkpoint-restore-reply", true,
                    "restore (store unreadable)");
    EXPECT_NE(reply.find("\"error\""), std::string::npos) << reply;
    ASSERT_EQ(faults.Exec("ALTER TABLE checkpoints_away RENAME TO checkpoints"), "");
  }

  // A stored checkpoint as the API serves it, and the reference fixtures.
  json created = json::parse(post.body);
  HttpReply doc =
      HttpCall(port, "GET", "/v1/checkpoints/" + created["checkpointId"].get<std::string>());
  ASSERT_EQ(doc.status, 200) << doc.body;
  manifest.push_back(Entry("stored checkpoint", "stored-checkpoint", doc.body, true));
  manifest.push_back(Entry("stored checkpoint", "checkpoint", doc.body, true));
  for (const std::string name : {"checkpoint-16k.json", "checkpoint-max.json"}) {
    manifest.push_back(Entry(name, "checkpoint", ReadSharedFixture(name), true));
  }

  // SIGTERM: the pre_shutdown checkpoint is announced before the process exits.
  EXPECT_EQ(sidecar.Signal(SIGTERM), 0) << sidecar.Stderr();
  // Seven: the phase change, three NATS creates, one HTTP create, the gate's, pre_shutdown.
  EXPECT_TRUE(capture.WaitFor(subj + "checkpoint.created", 7, 5000));

  // Everything seen on agent.{id}.>, each against the schema of its subject.
  auto schemas = SchemaBySubject();
  std::map<std::string, int> seen;
  for (const CapturedMessage& m : capture.Messages()) {
    auto it = schemas.find(m.subject);
    ASSERT_NE(it, schemas.end()) << "a subject with no schema: " << m.subject << " " << m.data;
    bool valid = !bad_requests.count(m.data);
    manifest.push_back(Entry(m.subject, it->second, m.data, valid));
    if (valid) {
      std::string kind = it->second;
      if (m.data.find("\"restore\"") != std::string::npos) kind += "/restore";
      if (m.data.find("\"field\"") != std::string::npos) kind += "/rejected";
      seen[kind]++;
    }
  }
  // Every kind of message was produced at least once.
  for (const std::string kind :
       {"checkpoint-create-request", "checkpoint-restore-request", "checkpoint-created",
        "checkpoint-failed", "checkpoint-failed/restore", "checkpoint-failed/rejected",
        "checkpoint-restored", "agent-status", "gate-resolve-request", "gate"}) {
    EXPECT_GT(seen[kind], 0) << "no " << kind << " message was captured";
  }

  // Negative checks: payloads that break the contract must be rejected.
  manifest.push_back(Entry("created without sizeBytes", "checkpoint-created",
                           R"({"checkpointId":"6ecb4f7f-1c2d-4e5f-8a9b-0c1d2e3f4a5b",)"
                           R"("sequenceNumber":3,"durationMs":1.5,"trigger":"manual"})",
                           false));
  manifest.push_back(Entry("failed with an unknown operation", "checkpoint-failed",
                           R"({"operation":"prune","reason":"INTERNAL: x"})", false));
  manifest.push_back(Entry("error reply without field", "error-reply",
                           R"({"error":{"code":"INVALID_ARGUMENT","message":"x: unknown field"}})",
                           false));
  manifest.push_back(Entry("create request with an unknown member", "checkpoint-create-request",
                           R"({"trigger":"manual","force":true})", false));
  manifest.push_back(Entry("status with an extra member", "agent-status",
                           R"({"agentId":"a","status":"active","at":"2026-11-03T02:45:00.000Z",)"
                           R"("x":1})",
                           false));

  manifest.push_back(Entry("gate with an unknown state", "gate",
                           R"({"gateId":"g","state":"maybe","reason":"r","request":null,)"
                           R"("toolCallId":null,"argsSha256":null,)"
                           R"("createdAt":"2026-11-03T02:45:00.000Z",)"
                           R"("expiresAt":"2026-11-03T02:45:00.000Z","decision":null,)"
                           R"("consumed":false,"consumedAt":null})",
                           false));
  manifest.push_back(Entry("gate resolve without by", "gate-resolve-request",
                           R"({"gateId":"g","decision":"approved"})", false));

  std::string path = dir.path() + "/nats-manifest.json";
  ASSERT_TRUE(WriteJsonFile(path, manifest));
  ValidatorRun run = RunValidator("payloads.mjs", path);
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

// The validator itself fails when a payload does not match (so the test above cannot pass
// vacuously).
TEST(NatsPayloadContractTest, ValidatorRejectsAWrongPayload) {
  TempDir dir;
  json manifest = json::array();
  json doc = json::parse(ReadSharedFixture("checkpoint-16k.json"));
  doc["activeTask"]["phase"] = "sleeping";
  manifest.push_back(Entry("fixture with a bad phase", "checkpoint", doc.dump(), true));
  std::string path = dir.path() + "/bad.json";
  ASSERT_TRUE(WriteJsonFile(path, manifest));
  ValidatorRun run = RunValidator("payloads.mjs", path);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("/activeTask/phase"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace agentckpt::testing
