// The tool-call ledger's pure parts: key derivation, the state's changes and bounds, its
// checkpoint form, the journal fold, and 200 retried calls with keys that execute once each.
#include "ledger/ledger_state.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "checkpoint/canonical.h"
#include "checkpoint/checkpoint_json.h"
#include "checkpoint/ledger_json.h"
#include "context/context_state.h"
#include "journal/journal_fold.h"
#include "ledger/ledger_key.h"

namespace agentckpt {
namespace {

using nlohmann::json;

constexpr int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z

LedgerCall NewCall(const std::string& id, const std::string& key, int64_t at = kT0) {
  LedgerCall c;
  c.call_id = id;
  c.idempotency_key = key;
  c.tool_name = "refund";
  c.effect = ToolEffect::kWrite;
  c.input_summary = "order 42";
  c.began_at_ms = at;
  return c;
}

TEST(LedgerKeyTest, DerivedFromToolArgumentsAndTask) {
  std::string a(64, 'a'), b(64, 'b');
  EXPECT_EQ(DeriveIdempotencyKey("refund", a, "t1"), DeriveIdempotencyKey("refund", a, "t1"));
  EXPECT_NE(DeriveIdempotencyKey("refund", a, "t1"), DeriveIdempotencyKey("refund", b, "t1"));
  EXPECT_NE(DeriveIdempotencyKey("refund", a, "t1"), DeriveIdempotencyKey("refund", a, "t2"));
  EXPECT_NE(DeriveIdempotencyKey("refund", a, "t1"), DeriveIdempotencyKey("charge", a, "t1"));
  EXPECT_EQ(DeriveIdempotencyKey("refund", a, "").size(), 3u + 64u);
}

TEST(LedgerStateTest, BeginEndReconcileAndErrorsLeaveTheStateAlone) {
  LedgerState s;
  ASSERT_TRUE(s.Apply(kLedgerBeginKind, LedgerState::BeginPayload(NewCall("c1", "k1"))).ok());
  ASSERT_TRUE(s.Apply(kLedgerBeginKind, LedgerState::BeginPayload(NewCall("c2", "k2"))).ok());
  LedgerState before = s;
  EXPECT_EQ(s.Apply(kLedgerBeginKind, LedgerState::BeginPayload(NewCall("c3", "k1"))).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(s.Apply(kLedgerEndKind, LedgerState::EndPayload("nope", {}, kT0)).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(s.Apply(kLedgerEndKind, json{{"callId", "c1"}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s, before);

  std::optional<LedgerCall> done;
  LedgerResult result{true, "refunded", 9, "re_1", false};
  ASSERT_TRUE(s.Apply(kLedgerEndKind, LedgerState::EndPayload("c1", result, kT0 + 5), &done).ok());
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->state, LedgerCallState::kCompleted);
  EXPECT_EQ(*done->result, result);
  EXPECT_EQ(s.FindKey("k1")->state, LedgerCallState::kCompleted);
  // A completed call cannot end again.
  EXPECT_EQ(s.Apply(kLedgerEndKind, LedgerState::EndPayload("c1", result, kT0)).code(),
            StatusCode::kNotFound);
  // not_executed removes the call: the key is free.
  ASSERT_TRUE(s.Apply(kLedgerReconcileKind,
                      LedgerState::ReconcilePayload("c2", ReconcileOutcome::kNotExecuted, "",
                                                    "never sent", kT0 + 6),
                      &done)
                  .ok());
  EXPECT_FALSE(done.has_value());
  EXPECT_EQ(s.FindKey("k2"), nullptr);
  EXPECT_EQ(s.List(LedgerCallState::kCompleted).size(), 1u);
  EXPECT_EQ(s.MarkOpenOutcomeUnknown(), 0);
}

TEST(LedgerStateTest, TrimKeepsTheNewestKeysWithinCountAndAge) {
  LedgerState s;
  for (int i = 0; i < 10; ++i) {
    std::string id = "c" + std::to_string(i);
    ASSERT_TRUE(s.Apply(kLedgerBeginKind, LedgerState::BeginPayload(NewCall(id, "k" + id))).ok());
    ASSERT_TRUE(s.Apply(kLedgerEndKind, LedgerState::EndPayload(id, {}, kT0 + i * 1000)).ok());
  }
  ASSERT_TRUE(s.Apply(kLedgerBeginKind, LedgerState::BeginPayload(NewCall("open", "kopen"))).ok());
  s.Trim(LedgerLimits{6, 1'000'000}, kT0 + 9000);
  EXPECT_EQ(s.ledger().completed.size(), 6u);
  EXPECT_EQ(s.ledger().completed.front().call_id, "c4");
  s.Trim(LedgerLimits{6, 2500}, kT0 + 9000);  // ended more than 2.5 s before: dropped
  ASSERT_EQ(s.ledger().completed.size(), 3u);
  EXPECT_EQ(s.ledger().completed.front().call_id, "c7");
  EXPECT_EQ(s.ledger().open.size(), 1u);  // open calls are never dropped
}

Checkpoint SealedWithLedger(const Ledger& l) {
  Checkpoint cp;
  cp.checkpoint_id = "5f0c6b2e-8a1d-4c3b-9e7f-0a1b2c3d4e5f";
  cp.agent_id = "a";
  cp.timestamp_ms = kT0;
  cp.sequence_number = 1;
  cp.expire_at_ms = kT0 + 7 * 86400000LL;
  cp.ledger = l;
  return cp;
}

TEST(LedgerCheckpointTest, RoundTripsInSchemaVersion2AndVersion1HasNone) {
  LedgerState s;
  ASSERT_TRUE(s.Apply(kLedgerBeginKind, LedgerState::BeginPayload(NewCall("c1", "k1"))).ok());
  ASSERT_TRUE(s.Apply(kLedgerBeginKind, LedgerState::BeginPayload(NewCall("c2", "k2"))).ok());
  ASSERT_TRUE(s.Apply(kLedgerEndKind,
                      LedgerState::EndPayload("c2", {false, "declined", 3, "", false}, kT0 + 1))
                  .ok());
  Checkpoint cp = SealedWithLedger(s.ledger());
  auto sealed = Seal(cp);
  ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
  const std::string full = FullDocumentJson(*sealed);
  auto back = VerifyDocumentJson(full);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->schema_version, 2);
  EXPECT_EQ(*back->ledger, s.ledger());
  // The hand-written canonical form equals nlohmann's.
  EXPECT_EQ(CanonicalJson(*back), CheckpointToJsonValue(*back, false).dump());

  json v1 = json::parse(full);
  v1["schemaVersion"] = 1;
  v1.erase("contentSha256");
  auto refused = CheckpointFromJson(v1.dump());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("ledger"), std::string::npos);
  v1.erase("ledger");
  auto old = CheckpointFromJson(v1.dump());
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->schema_version, 1);
  EXPECT_FALSE(old->ledger.has_value());
  EXPECT_TRUE(ValidateCheckpoint(*old).ok());

  json bad = json::parse(full);
  bad["ledger"]["openCalls"][0]["effect"] = "dangerous";
  auto rejected = CheckpointFromJson(bad.dump());
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.status().message().rfind("ledger.openCalls[0].effect", 0), 0u)
      << rejected.status().message();
}

// An in-memory journal behind a ContextState, and the restart that folds it.
class MemoryJournal {
 public:
  JournalHook Hook() {
    return [this](JournalKind kind, const std::string& payload) -> StatusOr<JournalPosition> {
      if (payload.empty()) return at_;
      JournalEntry e;
      e.agent_id = "a";
      e.sequence = at_.sequence + 1;
      e.kind = kind;
      e.payload = payload;
      e.timestamp_ms = kT0;
      e.prev_sha256 = at_.sha256;
      SealJournalEntry(&e);
      at_ = {e.sequence, e.sha256};
      entries.push_back(e);
      return at_;
    };
  }
  // The context a restarted sidecar continues from.
  Checkpoint Restore() const {
    Checkpoint cp;
    cp.agent_id = "a";
    JournalFoldReport r = FoldJournal(entries, &cp);
    EXPECT_FALSE(r.stopped) << r.stop_reason;
    return cp;
  }
  std::vector<JournalEntry> entries;

 private:
  JournalPosition at_{0, kJournalGenesisSha256};
};

TEST(LedgerFoldTest, TheFoldReachesTheLiveStateAndFillsToolCallLog) {
  MemoryJournal journal;
  ContextState live;
  live.set_journal(journal.Hook());
  auto b1 = live.BeginToolCall({"refund", ToolEffect::kWrite, "k1", "", "order 1"}, "c1", kT0);
  auto b2 = live.BeginToolCall({"charge", ToolEffect::kWrite, "k2", "", "order 2"}, "c2", kT0);
  ASSERT_TRUE(b1.ok() && b2.ok());
  ASSERT_TRUE(live.EndToolCall("c1", {true, "done", 4, "x1", false}, kT0 + 4, nullptr).ok());
  Checkpoint cp = journal.Restore();
  ASSERT_TRUE(cp.ledger.has_value());
  EXPECT_EQ(cp.schema_version, kSchemaVersion);
  EXPECT_EQ(*cp.ledger, live.Snapshot().ledger);
  EXPECT_EQ(cp.context_summary.tool_call_log, live.Snapshot().summary.tool_call_log);
  ASSERT_EQ(cp.context_summary.tool_call_log.size(), 1u);
  EXPECT_EQ(cp.context_summary.tool_call_log[0].output_summary, "done");
  // After the restart the open call is outcome_unknown.
  ContextState restarted;
  restarted.Seed(cp);
  auto unknown = restarted.ToolCalls(LedgerCallState::kOutcomeUnknown);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].call_id, "c2");
}

// The suite's replay of 200 retried calls: an agent runs 200 write calls with idempotency keys
// against a sink that counts executions per key. It crashes (with the sidecar: the context is
// rebuilt from the journal) at random points: before begin, after begin, after the side effect
// before end, after end. After a crash it retries the call from the start: begin replays a
// completed key, refuses an open one (it then checks the sink, as the agent checks the target
// system, and reconciles). No key may execute twice, and every key executes exactly once.
TEST(LedgerRetryTest, TwoHundredRetriedCallsWithKeysExecuteOnceEach) {
  std::mt19937 rng(16);
  MemoryJournal journal;
  auto state = std::make_unique<ContextState>();
  state->set_journal(journal.Hook());
  std::map<std::string, int> sink;  // executions per key
  int crashes = 0, replays = 0, unknown = 0, next_id = 0;
  auto crash = [&] {
    ++crashes;
    state = std::make_unique<ContextState>();
    state->Seed(journal.Restore());
    state->set_journal(journal.Hook());
  };
  auto maybe = [&](int pct) { return static_cast<int>(rng() % 100) < pct; };
  for (int call = 0; call < 200; ++call) {
    const std::string key = "refund-" + std::to_string(call);
    for (int attempt = 0; attempt < 20; ++attempt) {
      if (maybe(10)) {  // before begin
        crash();
        continue;
      }
      auto begun = state->BeginToolCall({"refund", ToolEffect::kWrite, key, "", ""},
                                        "c" + std::to_string(next_id++), kT0 + call);
      ASSERT_TRUE(begun.ok()) << begun.status().ToString();
      if (begun->kind == ToolCallBeginResult::Kind::kReplayed) {
        ++replays;
        break;
      }
      if (begun->kind == ToolCallBeginResult::Kind::kOpen) {
        ++unknown;
        const bool happened = sink[key] > 0;
        ASSERT_TRUE(state
                        ->ReconcileToolCall(begun->call.call_id,
                                            happened ? ReconcileOutcome::kSucceeded
                                                     : ReconcileOutcome::kNotExecuted,
                                            happened ? "found" : "", "checked", kT0 + call)
                        .ok());
        continue;
      }
      if (maybe(15)) {  // after begin
        crash();
        continue;
      }
      ++sink[key];      // the side effect
      if (maybe(15)) {  // after the side effect, before end
        crash();
        continue;
      }
      ASSERT_TRUE(
          state->EndToolCall(begun->call.call_id, {true, "ok", 1, "", false}, kT0 + call, nullptr)
              .ok());
      if (maybe(15)) {  // after end
        crash();
        continue;
      }
      break;
    }
  }
  int duplicates = 0;
  for (const auto& [key, n] : sink) duplicates += n > 1 ? n - 1 : 0;
  EXPECT_EQ(duplicates, 0);
  EXPECT_EQ(sink.size(), 200u);
  for (const auto& [key, n] : sink) EXPECT_EQ(n, 1) << key;
  EXPECT_GT(crashes, 50);  // the run did crash at every point
  EXPECT_GT(unknown, 10);
  EXPECT_GT(replays, 10);
}

}  // namespace
}  // namespace agentckpt
