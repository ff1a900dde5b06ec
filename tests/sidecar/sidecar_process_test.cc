// The real `agentckpt run` binary with a real nats-server and a real SQLite store.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "nats/nkey.h"
#include "nats/subjects.h"
#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

json Body(const HttpReply& r) { return json::parse(r.body, nullptr, false); }

class SidecarProcessTest : public SidecarEnvTest {};

TEST_F(SidecarProcessTest, EachTriggerWritesExactlyOneCheckpointWithItsReason) {
  auto sidecar = StartSidecar();
  ASSERT_TRUE(ListCheckpoints().empty());
  struct Step {
    std::string reason;
    std::function<void()> act;
  };
  std::vector<Step> steps = {
      {"task_phase_change",
       [&] {
         auto r = HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json"));
         ASSERT_EQ(r.status, 200) << r.body;
         EXPECT_EQ(Body(r)["checkpoint"]["trigger"], "task_phase_change");
       }},
      {"manual",
       [&] {
         auto r = HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"manual"})");
         ASSERT_EQ(r.status, 201) << r.body;
       }},
      {"pre_compaction",
       [&] {
         auto r = HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"pre_compaction"})");
         ASSERT_EQ(r.status, 201) << r.body;
         // Durable before the reply: the store already has it.
         auto store = OpenTestStore();
         EXPECT_TRUE(store->GetById(kProcAgent, Body(r)["checkpointId"]).ok());
       }},
      {"manual",
       [&] {
         json reply = Request(subjects::CheckpointCreate(kProcAgent),
                              R"({"trigger":"manual","taskId":"task-4521"})");
         ASSERT_TRUE(reply.is_object()) << reply.dump();
         EXPECT_EQ(reply["trigger"], "manual");
         EXPECT_TRUE(reply["sequenceNumber"].is_number());
       }},
      {"task_phase_change",
       [&] {
         auto r = HttpCall(port_, "PATCH", "/v1/context",
                           R"({"activeTask":{"phase":"reviewing","progress":90}})",
                           "application/merge-patch+json");
         ASSERT_EQ(r.status, 200) << r.body;
       }},
  };
  size_t expected = 0;
  for (const Step& step : steps) {
    step.act();
    ++expected;
    auto list = ListCheckpoints();
    ASSERT_EQ(list.size(), expected) << step.reason;
    EXPECT_EQ(TriggerReasonName(list.front().trigger_reason), step.reason);
    EXPECT_EQ(list.front().sequence_number, static_cast<int64_t>(expected));
    json event = NextEvent();
    ASSERT_TRUE(event.is_object()) << "no event after " << step.reason;
    EXPECT_EQ(event["subject"], subjects::CheckpointCreated(kProcAgent));
    EXPECT_EQ(event["data"]["checkpointId"], list.front().checkpoint_id);
    EXPECT_EQ(event["data"]["trigger"], step.reason);
  }
  // A change that is not a phase change writes nothing by itself.
  ASSERT_EQ(HttpCall(port_, "PATCH", "/v1/context", R"({"activeTask":{"progress":95}})").status,
            200);
  EXPECT_EQ(ListCheckpoints().size(), expected);

  EXPECT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
  auto list = ListCheckpoints();
  ASSERT_EQ(list.size(), expected + 1);
  EXPECT_EQ(TriggerReasonName(list.front().trigger_reason), "pre_shutdown");
}

TEST_F(SidecarProcessTest, PeriodicWritesOnlyWhenSomethingChanged) {
  auto sidecar = StartSidecar({{"CKPT_PERIOD_S", "1"}});
  // No context yet: nothing to write, however long we wait (two periods).
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  EXPECT_TRUE(ListCheckpoints().empty());
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
            200);  // task_phase_change checkpoint covers this change
  ASSERT_EQ(HttpCall(port_, "PATCH", "/v1/context", R"({"activeTask":{"progress":61}})").status,
            200);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (ListCheckpoints().size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto list = ListCheckpoints();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(TriggerReasonName(list.front().trigger_reason), "periodic");
  // Nothing changed since: no further periodic checkpoint over two more periods.
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  EXPECT_EQ(ListCheckpoints().size(), 2u);
}

// Near its bound (7 of CKPT_JOURNAL_MAX_ENTRIES 8) the journal asks for a checkpoint, and the
// sidecar's own thread writes it (trigger periodic, reason journal_full): no request carries it,
// and the tail never reaches the bound.
TEST_F(SidecarProcessTest, NearItsBoundTheJournalIsCheckpointedBesideTheRequests) {
  auto sidecar = StartSidecar({{"CKPT_JOURNAL_MAX_ENTRIES", "8"}});
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
            200);  // the new task: a task_phase_change checkpoint including this entry
  json created = NextEvent();
  ASSERT_TRUE(created.is_object());
  EXPECT_EQ(created["data"]["trigger"], "task_phase_change");
  for (int i = 1; i <= 6; ++i) {
    const std::string patch = R"({"activeTask":{"progress":)" + std::to_string(10 + i) + "}}";
    ASSERT_EQ(HttpCall(port_, "PATCH", "/v1/context", patch).status, 200);
  }
  EXPECT_EQ(ListCheckpoints().size(), 1u);  // 6 entries since: nothing asked for yet
  ASSERT_EQ(HttpCall(port_, "PATCH", "/v1/context", R"({"activeTask":{"progress":17}})").status,
            200);
  json early = NextEvent(10000);
  ASSERT_TRUE(early.is_object()) << "no checkpoint after 7 of 8 entries";
  EXPECT_EQ(early["data"]["trigger"], "periodic");
  EXPECT_EQ(early["data"]["reason"], "journal_full");
  auto list = ListCheckpoints();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(TriggerReasonName(list.front().trigger_reason), "periodic");
  auto metrics = HttpCall(port_, "GET", "/metrics", "");
  EXPECT_NE(metrics.body.find("agentckpt_journal_entries_since_checkpoint 0"), std::string::npos)
      << metrics.body.substr(0, 2000);
}

TEST_F(SidecarProcessTest, SigtermWritesPublishesAndExitsWithinFiveSeconds) {
  auto sidecar = StartSidecar();
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
            200);
  ASSERT_TRUE(NextEvent().is_object());
  auto start = std::chrono::steady_clock::now();
  int code = sidecar->Signal(SIGTERM, 10000);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(code, 0) << sidecar->Stderr();
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  auto list = ListCheckpoints();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(TriggerReasonName(list.front().trigger_reason), "pre_shutdown");
  auto store = OpenTestStore();
  auto latest = store->GetLatestVerified(kProcAgent);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->checkpoint.checkpoint_id, list.front().checkpoint_id);
  EXPECT_TRUE(latest->skipped.empty());
  json event = NextEvent();
  ASSERT_TRUE(event.is_object()) << "checkpoint.created was not flushed before exit";
  EXPECT_EQ(event["data"]["trigger"], "pre_shutdown");
  EXPECT_EQ(event["data"]["checkpointId"], list.front().checkpoint_id);
  // SIGINT behaves the same.
  auto again = StartSidecar();
  EXPECT_EQ(again->Signal(SIGINT), 0);
  EXPECT_EQ(TriggerReasonName(ListCheckpoints().front().trigger_reason), "pre_shutdown");
}

TEST_F(SidecarProcessTest, BadInputIsRejectedAndLeavesTheContextUnchanged) {
  auto sidecar = StartSidecar({{"CKPT_HTTP_BODY_MAX_BYTES", "65536"}});
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
            200);
  const std::string before = HttpCall(port_, "GET", "/v1/context").body;
  const size_t checkpoints = ListCheckpoints().size();
  json good = json::parse(FixtureContextBody("checkpoint-16k.json"));
  json bad_progress = good;
  bad_progress["activeTask"]["progress"] = 150;
  json bad_log = good;
  bad_log["contextSummary"]["toolCallLog"][2]["success"] = "yes";
  json missing = good;
  missing["contextSummary"].erase("draftContent");
  struct Case {
    std::string method, path, body;
    int status;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"PUT", "/v1/context", "{not json", 400, ""},
      {"PUT", "/v1/context", "", 400, ""},
      {"PUT", "/v1/context", "[1,2]", 400, ""},
      {"PUT", "/v1/context", bad_progress.dump(), 400, "activeTask.progress"},
      {"PUT", "/v1/context", bad_log.dump(), 400, "contextSummary.toolCallLog[2].success"},
      {"PUT", "/v1/context", missing.dump(), 400, "contextSummary.draftContent"},
      {"PUT", "/v1/context", R"({"contextSummary":{},"x":1})", 400, "x"},
      {"PUT", "/v1/context", "\"\xff\xfe\"", 400, ""},
      {"PATCH", "/v1/context", R"({"activeTask":{"phase":"dreaming"}})", 400, "activeTask.phase"},
      {"PATCH", "/v1/context", R"({"contextSummary":{"planOutline":"one"}})", 400,
       "contextSummary.planOutline"},
      {"PATCH", "/v1/context", R"({"contextSummary":null})", 400, "contextSummary"},
      {"POST", "/v1/tool-calls", R"({"toolName":"x"})", 400, "timestamp"},
      {"POST", "/v1/tool-calls",
       R"({"toolName":"x","timestamp":"yesterday","inputSummary":"","outputSummary":"","durationMs":1,"success":true})",
       400, "timestamp"},
      {"POST", "/v1/checkpoints", R"({"trigger":"periodic"})", 400, "trigger"},
      {"POST", "/v1/checkpoints", R"({"trigger":"manual","extra":1})", 400, "extra"},
      {"PUT", "/v1/context", std::string(70000, ' '), 413, ""},
      {"POST", "/v1/tool-calls", "[" + std::string(70000, '1') + "]", 413, ""},
      {"GET", "/v1/nothing", "", 404, ""},
      {"DELETE", "/v1/context", "", 405, ""},
      {"PUT", "/v1/checkpoints", "{}", 405, ""},
      {"GET", "/v1/checkpoints/00000000-0000-4000-8000-000000000000", "", 404, ""},
      {"GET", "/v1/checkpoints?limit=0", "", 400, "limit"},
  };
  for (const Case& c : cases) {
    HttpReply r = HttpCall(port_, c.method, c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path << " " << c.body.substr(0, 80)
                                  << " -> " << r.body;
    json err = Body(r);
    ASSERT_TRUE(err.is_object() && err.contains("error")) << r.body;
    EXPECT_TRUE(err["error"]["code"].is_string());
    EXPECT_TRUE(err["error"]["message"].is_string());
    EXPECT_EQ(err["error"]["field"], c.field) << c.body.substr(0, 80) << " -> " << r.body;
    EXPECT_EQ(HttpCall(port_, "GET", "/v1/context").body, before) << c.body.substr(0, 80);
  }
  EXPECT_EQ(HttpCall(port_, "DELETE", "/v1/context").headers["Allow"], "GET, PUT, PATCH");
  EXPECT_EQ(ListCheckpoints().size(), checkpoints);
}

TEST_F(SidecarProcessTest, ListGetReadinessAndMetrics) {
  auto sidecar = StartSidecar();
  EXPECT_EQ(HttpCall(port_, "GET", "/readyz").status, 200);
  // The sidecar opens its SQLite store with the WAL grown to its steady size (4,000 pages), so
  // its commits overwrite the file instead of extending it (SqliteStoreOptions::presize_wal).
  EXPECT_GE(std::filesystem::file_size(dir_.File("store.db") + "-wal"), 4000u * 4120u);
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
            200);
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/tool-calls",
                     R"({"toolName":"search","timestamp":"2026-11-03T02:40:00.000Z",)"
                     R"("inputSummary":"q","outputSummary":"r","durationMs":5,"success":false})")
                .status,
            201);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"manual"})").status, 201);
  }
  json list = Body(HttpCall(port_, "GET", "/v1/checkpoints?limit=2"));
  ASSERT_EQ(list["checkpoints"].size(), 2u);
  EXPECT_EQ(list["checkpoints"][0]["sequenceNumber"], 4);
  EXPECT_EQ(list["checkpoints"][0]["triggerReason"], "manual");
  EXPECT_EQ(list["checkpoints"][1]["sequenceNumber"], 3);
  std::string id = list["checkpoints"][0]["checkpointId"];
  HttpReply one = HttpCall(port_, "GET", "/v1/checkpoints/" + id);
  ASSERT_EQ(one.status, 200);
  json doc = Body(one);
  EXPECT_EQ(doc["checkpointId"], id);
  EXPECT_EQ(doc["agentId"], kProcAgent);
  EXPECT_EQ(doc["natsPosition"]["streamName"], "INBOX");
  EXPECT_EQ(doc["contextSummary"]["toolCallLog"].back()["toolName"], "search");
  HttpReply metrics = HttpCall(port_, "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  for (const char* needle :
       {"agentckpt_checkpoint_duration_seconds_count{trigger=\"manual\"} 3",
        "agentckpt_checkpoint_duration_seconds_count{trigger=\"task_phase_change\"} 1",
        "agentckpt_checkpoint_size_bytes_count 4",
        "agentckpt_checkpoints_total{trigger=\"manual\"} 3",
        "agentckpt_store_operation_duration_seconds_count{operation=\"put\"} 4",
        "agentckpt_nats_connected 1",
        "agentckpt_nats_events_published_total{event=\"checkpoint.created\"} 4"}) {
    EXPECT_NE(metrics.body.find(needle), std::string::npos) << needle << "\n" << metrics.body;
  }
  EXPECT_EQ(metrics.headers["Content-Type"].rfind("text/plain", 0), 0u);
}

TEST_F(SidecarProcessTest, NatsPositionEqualsTheConsumersAckFloor) {
  ASSERT_TRUE(js_->PublishN(std::string("inbox.") + kProcAgent + ".task", 8, "m").ok());
  ASSERT_TRUE(js_->FetchAndAckThrough("INBOX", "agent", 5).ok());
  auto sidecar = StartSidecar();
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
            200);
  auto consumer = js_->SnapshotConsumer("INBOX", "agent");
  ASSERT_TRUE(consumer.ok());
  json doc = Body(HttpCall(port_, "GET", "/v1/checkpoints/" + ListCheckpoints()[0].checkpoint_id));
  EXPECT_EQ(doc["natsPosition"]["lastAckedSequence"], consumer->ack_floor_stream_seq);
  EXPECT_EQ(doc["natsPosition"]["lastAckedSequence"], 5);
  EXPECT_EQ(doc["natsPosition"]["pendingMessageCount"], consumer->num_pending);
  EXPECT_EQ(doc["natsPosition"]["pendingMessageCount"], 3);
  EXPECT_EQ(doc["natsPosition"]["consumerName"], "agent");
}

TEST_F(SidecarProcessTest, RestoreRunsAtStartAndOnRequest) {
  {
    auto first = StartSidecar();
    ASSERT_EQ(
        HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
        200);
    ASSERT_EQ(first->Signal(SIGTERM), 0) << first->Stderr();
  }
  const std::string latest = ListCheckpoints().front().checkpoint_id;
  while (NextEvent(200).is_object()) {
  }
  auto sidecar = StartSidecar({{"CKPT_RESTORE_ON_START", "true"}});
  HttpReply last = HttpCall(port_, "GET", "/v1/restoration");
  if (last.status == 503) {
    EXPECT_EQ(Body(last)["error"]["code"], "UNAVAILABLE");
    EXPECT_EQ(HttpCall(port_, "POST", "/v1/restore").status, 503);
    json reply = Request(subjects::CheckpointRestore(kProcAgent), "{}");
    EXPECT_EQ(reply["error"]["code"], "UNAVAILABLE");
    GTEST_SKIP() << "restore is not built into this agentckpt";
  }
  ASSERT_EQ(last.status, 200) << last.body;
  EXPECT_EQ(Body(last)["checkpointId"], latest);
  EXPECT_FALSE(Body(last)["prompt"].get<std::string>().empty());
  json restored = NextEvent();
  ASSERT_TRUE(restored.is_object());
  EXPECT_EQ(restored["subject"], subjects::CheckpointRestored(kProcAgent));
  EXPECT_EQ(restored["data"]["checkpointId"], latest);
  // On request, over HTTP and over NATS.
  HttpReply again = HttpCall(port_, "POST", "/v1/restore");
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(Body(again)["checkpointId"], latest);
  json reply = Request(subjects::CheckpointRestore(kProcAgent), "{}");
  ASSERT_TRUE(reply.is_object());
  EXPECT_EQ(reply["checkpointId"], latest);
  EXPECT_TRUE(reply["prompt"].is_string());
}

TEST_F(SidecarProcessTest, WorkspaceStateComesFromTheGitWorkingTree) {
  TempDir repo;
  // The test prepares the repository with git; the sidecar reads it with libgit2.
  std::string setup = "cd " + repo.path() +
                      " && git init -q -b feature/x . && git config user.email t@example.com"
                      " && git config user.name t && echo a > a.txt && git add a.txt"
                      " && git commit -q -m first && echo b > b.txt && echo changed > a.txt";
  ASSERT_EQ(std::system(setup.c_str()), 0);
  auto sidecar = StartSidecar({{"WORKSPACE_DIR", repo.path()}});
  json body = json::parse(FixtureContextBody("checkpoint-16k.json"));
  body["workspace"] = {{"modifiedFiles", {"ignored.txt"}},
                       {"uncommittedChanges", false},
                       {"lastCommitHash", ""},
                       {"branchName", "ignored"}};
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", body.dump()).status, 200);
  json doc = Body(HttpCall(port_, "GET", "/v1/checkpoints/" + ListCheckpoints()[0].checkpoint_id));
  EXPECT_EQ(doc["workspace"]["branchName"], "feature/x");
  EXPECT_EQ(doc["workspace"]["uncommittedChanges"], true);
  EXPECT_EQ(doc["workspace"]["modifiedFiles"], json({"a.txt", "b.txt"}));
  EXPECT_EQ(doc["workspace"]["lastCommitHash"].get<std::string>().size(), 40u);
}

TEST_F(SidecarProcessTest, NatsUserAndPasswordAreUsed) {
  NatsServerProcess secured("--user agent --pass s3cret");
  auto good = StartSidecar({{"NATS_URL", secured.url()},
                            {"NATS_USER", "agent"},
                            {"NATS_PASSWORD", "s3cret"},
                            {"JS_STREAM", ""},
                            {"JS_CONSUMER", ""}});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (HttpCall(port_, "GET", "/readyz").status != 200 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(HttpCall(port_, "GET", "/readyz").status, 200);
  EXPECT_EQ(good->Signal(SIGTERM), 0) << good->Stderr();
  // Credentials the server refuses are a bad setting.
  SidecarProcess bad(SidecarEnv({{"NATS_URL", secured.url()},
                                 {"NATS_USER", "agent"},
                                 {"NATS_PASSWORD", "wrong"},
                                 {"JS_STREAM", ""},
                                 {"JS_CONSUMER", ""}}),
                     dir_.path());
  EXPECT_EQ(bad.Wait(10000), 2);
  EXPECT_NE(bad.Stderr().find("NATS_PASSWORD"), std::string::npos) << bad.Stderr();
  // With NATS unreachable the sidecar starts anyway and checkpoints go to the store.
  secured.Kill();
  auto offline = StartSidecar({{"NATS_URL", secured.url()},
                               {"NATS_USER", "agent"},
                               {"NATS_PASSWORD", "s3cret"},
                               {"JS_STREAM", ""},
                               {"JS_CONSUMER", ""}});
  HttpReply ready = HttpCall(port_, "GET", "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(Body(ready)["nats"], "disconnected");
  EXPECT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"manual"})").status, 201);
  EXPECT_EQ(offline->Signal(SIGTERM), 0) << offline->Stderr();
}

TEST_F(SidecarProcessTest, NatsNKeySeedAloneAuthenticates) {
  const std::string seed = EncodeNKeySeed(kNKeyUserPrefix, std::string(32, '\x2a'));
  const std::string other = EncodeNKeySeed(kNKeyUserPrefix, std::string(32, '\x2b'));
  auto pub = NKeyPublicFromSeedText(seed);
  ASSERT_TRUE(pub.ok());
  std::ofstream(dir_.File("agent.nk")) << seed << "\n";
  std::ofstream(dir_.File("other.nk")) << other << "\n";
  std::ofstream(dir_.File("nkey.conf"))
      << "authorization { users = [ { nkey: \"" << *pub << "\" } ] }\n";
  // The server checks the signature made with the seed against the derived public key.
  NatsServerProcess secured("-c " + dir_.File("nkey.conf"));
  auto good = StartSidecar({{"NATS_URL", secured.url()},
                            {"NATS_NKEY_SEED", dir_.File("agent.nk")},
                            {"JS_STREAM", ""},
                            {"JS_CONSUMER", ""}});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (HttpCall(port_, "GET", "/readyz").status != 200 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(HttpCall(port_, "GET", "/readyz").status, 200);
  EXPECT_EQ(good->Signal(SIGTERM), 0) << good->Stderr();
  SidecarProcess bad(SidecarEnv({{"NATS_URL", secured.url()},
                                 {"NATS_NKEY_SEED", dir_.File("other.nk")},
                                 {"JS_STREAM", ""},
                                 {"JS_CONSUMER", ""}}),
                     dir_.path());
  EXPECT_EQ(bad.Wait(10000), 2);
  EXPECT_NE(bad.Stderr().find("NATS_NKEY_SEED"), std::string::npos) << bad.Stderr();
}

TEST_F(SidecarProcessTest, BadSettingsExitWithCode2NamingTheSetting) {
  struct Case {
    std::map<std::string, std::string> env;
    std::string named;
  };
  const std::vector<Case> cases = {
      {{{"AGENT_ID", ""}}, "AGENT_ID"},
      {{{"CKPT_PERIOD_S", "0"}}, "CKPT_PERIOD_S"},
      {{{"CKPT_HTTP_ADDR", "nowhere"}}, "CKPT_HTTP_ADDR"},
      {{{"CKPT_STORE", "ftp://x"}}, "CKPT_STORE"},
      {{{"JS_CONSUMER", ""}}, "JS_CONSUMER"},
      {{{"NATS_TLS_CA", "/no/such/ca.pem"}}, "NATS_TLS_CA"},
      {{{"CKPT_KEEP", "lots"}}, "CKPT_KEEP"},
  };
  for (const Case& c : cases) {
    SidecarProcess p(SidecarEnv(c.env), dir_.path());
    EXPECT_EQ(p.Wait(10000), 2) << c.named;
    EXPECT_NE(p.Stderr().find(c.named), std::string::npos) << p.Stderr();
  }
  // The HTTP port already taken is a bad CKPT_HTTP_ADDR too.
  auto first = StartSidecar();
  SidecarProcess second(SidecarEnv({{"CKPT_STORE", "sqlite://" + dir_.File("other.db")}}),
                        dir_.path());
  EXPECT_EQ(second.Wait(10000), 2);
  EXPECT_NE(second.Stderr().find("CKPT_HTTP_ADDR"), std::string::npos) << second.Stderr();
}

}  // namespace
}  // namespace agentckpt::testing
