// The tool-call ledger end to end (docs/tool-call-ledger.md): a real sidecar with a real
// nats-server and SQLite store, killed with SIGKILL between a call's begin and its end. After the
// restart the call is outcome_unknown (listed, refused with 409, counted by the restore and
// listed first in the prompt); a completed key replays its result without a store write; a
// not_executed reconcile frees the key.
#include <signal.h>

#include <nlohmann/json.hpp>
#include <string>

#include "common/sha256.h"
#include "tests/sidecar/sidecar_test_env.h"
#include "tests/support/nats_server.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

json Body(const HttpReply& r) { return json::parse(r.body, nullptr, false); }

class LedgerKillTest : public SidecarEnvTest {
 protected:
  std::map<std::string, std::string> Defaults() {
    return {{"CKPT_PERIOD_S", "300"}, {"CKPT_RESTORE_ON_START", "true"}};
  }

  bool WaitReady(int port, int timeout_ms) {
    for (int waited = 0; waited < timeout_ms; waited += 50) {
      if (HttpCall(port, "GET", "/readyz").status == 200) return true;
      usleep(50 * 1000);
    }
    return false;
  }

  HttpReply Begin(const std::string& tool, const std::string& key, const std::string& effect) {
    json body = {{"toolName", tool}, {"effect", effect}, {"inputSummary", "refund order 42"}};
    if (!key.empty()) body["idempotencyKey"] = key;
    body["argsSha256"] = Sha256Hex("{\"order\":42}");
    return HttpCall(port_, "POST", "/v1/tool-calls/begin", body.dump());
  }

  HttpReply End(const std::string& call_id, bool success, const std::string& output) {
    return HttpCall(port_, "POST", "/v1/tool-calls/" + call_id + "/end",
                    json{{"success", success},
                         {"outputSummary", output},
                         {"durationMs", 7},
                         {"externalId", "re_123"}}
                        .dump());
  }

  json List(const std::string& state) {
    return Body(HttpCall(port_, "GET", "/v1/tool-calls?state=" + state))["calls"];
  }
};

TEST_F(LedgerKillTest, ACallOpenAtSigkillIsOutcomeUnknownAfterTheRestart) {
  auto sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  // A task is active: the derived key includes it, and the checkpoint carries the ledger.
  auto put = HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json"));
  ASSERT_EQ(put.status, 200) << put.body;
  auto begun = Begin("refund", "refund-42", "write");
  ASSERT_EQ(begun.status, 201) << begun.body;
  json b = Body(begun);
  EXPECT_EQ(b["state"], "started");
  EXPECT_EQ(b["idempotencyKey"], "refund-42");
  EXPECT_EQ(b["durable"], true);
  const std::string call_id = b["callId"];
  ASSERT_EQ(List("started").size(), 1u);
  // The side effect may or may not have happened: the sidecar dies before the end.
  ASSERT_EQ(sidecar->Signal(SIGKILL), 128 + SIGKILL);

  auto restarted = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000)) << restarted->Stdout();
  json unknown = List("outcome_unknown");
  ASSERT_EQ(unknown.size(), 1u) << unknown.dump();
  EXPECT_EQ(unknown[0]["callId"], call_id);
  EXPECT_EQ(unknown[0]["effect"], "write");
  EXPECT_TRUE(List("started").empty());
  // A retry with the same key is refused until the call is reconciled.
  auto retry = Begin("refund", "refund-42", "write");
  ASSERT_EQ(retry.status, 409) << retry.body;
  EXPECT_EQ(Body(retry)["code"], "OUTCOME_UNKNOWN");
  EXPECT_EQ(Body(retry)["error"]["code"], "OUTCOME_UNKNOWN");
  EXPECT_EQ(Body(retry)["callId"], call_id);
  // The restore counted it, the metric shows it, and the prompt lists it before anything else.
  json restoration = Body(HttpCall(port_, "GET", "/v1/restoration"));
  EXPECT_EQ(restoration["outcomeUnknownCalls"], 1) << restoration.dump();
  const std::string prompt = restoration["prompt"];
  size_t listed = prompt.find("UNKNOWN outcome");
  ASSERT_NE(listed, std::string::npos) << prompt;
  EXPECT_LT(listed, prompt.find("## Active task"));
  EXPECT_NE(prompt.find(call_id), std::string::npos);
  EXPECT_NE(prompt.find("VERIFY AND RECONCILE before any retry"), std::string::npos);
  EXPECT_NE(
      HttpCall(port_, "GET", "/metrics").body.find("agentckpt_ledger_outcome_unknown_calls 1"),
      std::string::npos);
  // Reconciled as succeeded: the key now replays that result.
  auto rec = HttpCall(port_, "POST", "/v1/tool-calls/" + call_id + "/reconcile",
                      R"({"outcome":"succeeded","outputSummary":"refund re_123 found"})");
  ASSERT_EQ(rec.status, 200) << rec.body;
  auto replay = Begin("refund", "refund-42", "write");
  ASSERT_EQ(replay.status, 200) << replay.body;
  EXPECT_EQ(Body(replay)["replayed"], true);
  EXPECT_EQ(Body(replay)["result"]["outputSummary"], "refund re_123 found");
  EXPECT_EQ(Body(replay)["result"]["reconciled"], true);
}

TEST_F(LedgerKillTest, ACompletedKeyReplaysWithoutAStoreWriteAcrossARestart) {
  auto sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  // A checkpoint first: the restore at start runs from it and folds the call's entries.
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", "").status, 201);
  auto begun = Begin("send_email", "", "write");  // the key is derived
  ASSERT_EQ(begun.status, 201) << begun.body;
  const std::string call_id = Body(begun)["callId"];
  const std::string key = Body(begun)["idempotencyKey"];
  EXPECT_EQ(key.rfind("d1:", 0), 0u) << key;
  auto ended = End(call_id, true, "sent message 77");
  ASSERT_EQ(ended.status, 200) << ended.body;
  const int64_t seq = Body(ended)["journalSequence"];
  // The call entered toolCallLog as POST /v1/tool-calls would have recorded it.
  json log = Body(HttpCall(port_, "GET", "/v1/context"))["contextSummary"]["toolCallLog"];
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back()["toolName"], "send_email");
  EXPECT_EQ(log.back()["outputSummary"], "sent message 77");
  ASSERT_EQ(sidecar->Signal(SIGKILL), 128 + SIGKILL);

  auto restarted = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000)) << restarted->Stdout();
  json restoration = Body(HttpCall(port_, "GET", "/v1/restoration"));
  EXPECT_EQ(restoration["outcomeUnknownCalls"], 0) << restoration.dump();
  EXPECT_EQ(restoration["completedWritesSinceCheckpoint"], 1) << restoration.dump();
  EXPECT_NE(restoration["prompt"].get<std::string>().find("Write calls completed since"),
            std::string::npos);
  for (int i = 0; i < 3; ++i) {
    auto replay = Begin("send_email", "", "write");
    ASSERT_EQ(replay.status, 200) << replay.body;
    json r = Body(replay);
    EXPECT_EQ(r["replayed"], true);
    EXPECT_EQ(r["callId"], call_id);
    EXPECT_EQ(r["idempotencyKey"], key);
    EXPECT_EQ(r["result"]["success"], true);
    EXPECT_EQ(r["result"]["outputSummary"], "sent message 77");
    EXPECT_EQ(r["result"]["externalId"], "re_123");
    EXPECT_EQ(r.count("journalSequence"), 0u);
  }
  // No replay wrote to the journal: the next change gets the very next sequence.
  auto next = HttpCall(port_, "PATCH", "/v1/context", R"({"contextSummary":{"draftContent":"x"}})");
  ASSERT_EQ(next.status, 200) << next.body;
  EXPECT_EQ(Body(next)["journalSequence"], seq + 1);
}

TEST_F(LedgerKillTest, NotExecutedFreesTheKeyForANewBegin) {
  auto sidecar = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000));
  auto begun = Begin("charge", "charge-9", "write");
  ASSERT_EQ(begun.status, 201) << begun.body;
  const std::string first = Body(begun)["callId"];
  ASSERT_EQ(sidecar->Signal(SIGKILL), 128 + SIGKILL);

  auto restarted = StartSidecar(Defaults());
  ASSERT_TRUE(WaitReady(port_, 10000)) << restarted->Stdout();
  ASSERT_EQ(Begin("charge", "charge-9", "write").status, 409);
  auto rec = HttpCall(port_, "POST", "/v1/tool-calls/" + first + "/reconcile",
                      R"({"outcome":"not_executed","note":"no charge in the ledger of record"})");
  ASSERT_EQ(rec.status, 200) << rec.body;
  EXPECT_EQ(Body(rec)["keyFreed"], true);
  EXPECT_EQ(Body(rec)["durable"], true);
  EXPECT_TRUE(List("outcome_unknown").empty());
  auto again = Begin("charge", "charge-9", "write");
  ASSERT_EQ(again.status, 201) << again.body;
  EXPECT_NE(Body(again)["callId"], first);
  // Errors: an unknown call, a second end, a bad outcome.
  EXPECT_EQ(End("00000000-0000-4000-8000-000000000000", true, "").status, 404);
  ASSERT_EQ(End(Body(again)["callId"], true, "charged").status, 200);
  auto twice = End(Body(again)["callId"], true, "charged");
  EXPECT_EQ(twice.status, 409) << twice.body;
  EXPECT_EQ(Body(twice)["error"]["code"], "ALREADY_COMPLETED");
  auto bad =
      HttpCall(port_, "POST", "/v1/tool-calls/" + first + "/reconcile", R"({"outcome":"maybe"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(Body(bad)["error"]["field"], "outcome");
}

// Without a journal (CKPT_DURABILITY=memory, as on a store that keeps none) a begin is made
// durable by a checkpoint before its reply, so the call is still outcome_unknown after SIGKILL.
TEST_F(LedgerKillTest, WithoutAJournalABeginIsCheckpointedBeforeItsReply) {
  auto env = Defaults();
  env["CKPT_DURABILITY"] = "memory";
  auto sidecar = StartSidecar(env);
  ASSERT_TRUE(WaitReady(port_, 10000));
  auto begun = Begin("refund", "refund-mem", "write");
  ASSERT_EQ(begun.status, 201) << begun.body;
  EXPECT_EQ(Body(begun)["durable"], true);
  EXPECT_GE(Body(begun)["checkpointSequence"].get<int64_t>(), 1);
  const std::string call_id = Body(begun)["callId"];
  ASSERT_EQ(sidecar->Signal(SIGKILL), 128 + SIGKILL);

  auto restarted = StartSidecar(env);
  ASSERT_TRUE(WaitReady(port_, 10000)) << restarted->Stdout();
  json unknown = List("outcome_unknown");
  ASSERT_EQ(unknown.size(), 1u) << unknown.dump();
  EXPECT_EQ(unknown[0]["callId"], call_id);
  EXPECT_EQ(Begin("refund", "refund-mem", "write").status, 409);
  auto ended = End(call_id, true, "refunded after all");
  ASSERT_EQ(ended.status, 200) << ended.body;
  EXPECT_EQ(Body(ended)["durable"], true);
  ASSERT_EQ(restarted->Signal(SIGKILL), 128 + SIGKILL);

  auto again = StartSidecar(env);
  ASSERT_TRUE(WaitReady(port_, 10000)) << again->Stdout();
  auto replay = Begin("refund", "refund-mem", "write");
  ASSERT_EQ(replay.status, 200) << replay.body;
  EXPECT_EQ(Body(replay)["result"]["outputSummary"], "refunded after all");
}

}  // namespace
}  // namespace agentckpt::testing
