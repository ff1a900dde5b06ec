// gate/: the gate record's stored form and the rules; and gate entries folded by the journal.
#include "gate/gate_rules.h"

#include <gtest/gtest.h>

#include "journal/journal_fold.h"

namespace agentckpt {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1'800'000'000'000;
const std::string kHash(64, 'a');

GateRequestInput Input(const std::string& id) {
  json body = {{"reason", "send the invoice"},
               {"argsSha256", kHash},
               {"toolCallId", "call-1"},
               {"request", {{"to", "ops"}}}};
  if (!id.empty()) body["gateId"] = id;
  auto in = ParseGateRequest(body);
  EXPECT_TRUE(in.ok()) << in.status().ToString();
  return *in;
}

GateResolution Resolution(const std::string& decision, const std::string& by,
                          const std::string& hash) {
  json body = {{"gateId", "g"}, {"decision", decision}, {"by", by}};
  if (!hash.empty()) body["argsSha256"] = hash;
  auto r = ParseGateResolution(body, "");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return *r;
}

TEST(GateRulesTest, RequestDefaultsToTheTtlAndIsIdempotentForTheSameRequest) {
  auto made = RequestGate({}, Input("g"), kNow, 86400, "unused");
  ASSERT_TRUE(made.ok());
  EXPECT_TRUE(made->changed);
  EXPECT_EQ(made->gate.expires_at_ms, kNow + 86400'000);
  EXPECT_EQ(made->gate.state, GateState::kPending);
  std::vector<Gate> gates = {made->gate};
  auto again = RequestGate(gates, Input("g"), kNow + 5, 86400, "unused");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed);
  GateRequestInput other = Input("g");
  other.reason = "something else";
  EXPECT_EQ(RequestGate(gates, other, kNow, 86400, "x").status().code(),
            StatusCode::kAlreadyExists);
  GateRequestInput unnamed = Input("");
  EXPECT_EQ(RequestGate(gates, unnamed, kNow, 86400, "gen-1")->gate.gate_id, "gen-1");
}

TEST(GateRulesTest, BadRequestsNameTheField) {
  EXPECT_EQ(ParseGateRequest(json{{"reason", ""}}).status().message().rfind("reason:", 0), 0u);
  json big = {{"reason", "r"}, {"request", std::string(16 * 1024, 'x')}};
  EXPECT_EQ(ParseGateRequest(big).status().message().rfind("request:", 0), 0u);
  json both = {{"reason", "r"}, {"ttlSeconds", 5}, {"expiresAt", "2030-01-01T00:00:00Z"}};
  EXPECT_EQ(ParseGateRequest(both).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseGateRequest(json{{"reason", "r"}, {"argsSha256", "xyz"}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseGateResolution(json{{"gateId", "g"}, {"decision", "maybe"}, {"by", "a"}}, "")
                .status()
                .message()
                .rfind("decision:", 0),
            0u);
}

TEST(GateRulesTest, AResolutionIsSingleUseAndChecksTheArgsHash) {
  Gate g = RequestGate({}, Input("g"), kNow, 60, "")->gate;
  EXPECT_EQ(
      ResolveGate(g, Resolution("approved", "alice", std::string(64, 'b')), kNow).status().code(),
      StatusCode::kFailedPrecondition);
  EXPECT_EQ(ResolveGate(g, Resolution("approved", "alice", ""), kNow).status().code(),
            StatusCode::kFailedPrecondition);
  auto approved = ResolveGate(g, Resolution("approved", "alice", kHash), kNow + 1);
  ASSERT_TRUE(approved.ok());
  EXPECT_TRUE(approved->changed);
  EXPECT_EQ(approved->gate.state, GateState::kApproved);
  auto same = ResolveGate(approved->gate, Resolution("approved", "bob", ""), kNow + 2);
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(same->changed);
  EXPECT_EQ(same->gate.decision->by, "alice");
  auto conflict = ResolveGate(approved->gate, Resolution("rejected", "bob", ""), kNow + 2);
  EXPECT_EQ(conflict.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(conflict.status().message().find("alice"), std::string::npos);
}

TEST(GateRulesTest, ExpiryRejectsAndConsumeNeedsADecision) {
  Gate g = RequestGate({}, Input("g"), kNow, 60, "")->gate;
  EXPECT_FALSE(ExpireIfDue(g, kNow + 59'999));
  EXPECT_EQ(ConsumeGate(g, kNow).status().code(), StatusCode::kFailedPrecondition);
  auto expired = ExpireIfDue(g, kNow + 60'000);
  ASSERT_TRUE(expired);
  EXPECT_EQ(expired->state, GateState::kRejected);
  EXPECT_TRUE(expired->decision->expired);
  EXPECT_EQ(ResolveGate(*expired, Resolution("approved", "a", kHash), kNow).status().code(),
            StatusCode::kAlreadyExists);
  auto consumed = ConsumeGate(*expired, kNow + 70'000);
  ASSERT_TRUE(consumed.ok());
  EXPECT_TRUE(consumed->gate.consumed);
  EXPECT_FALSE(ConsumeGate(consumed->gate, kNow + 80'000)->changed);
}

TEST(GateRecordTest, StoredFormRoundTripsAndRejectsDamage) {
  Gate g = RequestGate({}, Input("g"), kNow, 60, "")->gate;
  g = ResolveGate(g, Resolution("approved", "alice", kHash), kNow)->gate;
  auto back = GateFromJson(GateToJson(g));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, g);
  json damaged = GateToJson(g);
  damaged["decision"] = nullptr;  // approved without a decision
  EXPECT_EQ(GateFromJson(damaged).status().code(), StatusCode::kDataLoss);
  damaged = GateToJson(g);
  damaged["extra"] = 1;
  EXPECT_EQ(GateFromJson(damaged).status().code(), StatusCode::kDataLoss);
}

TEST(GateRecordTest, UpsertKeepsABoundedNumberOfConsumedGates) {
  std::vector<Gate> gates;
  for (size_t i = 0; i < kGateConsumedKept + 5; ++i) {
    Gate g = RequestGate({}, Input("g" + std::to_string(i)), kNow, 60, "")->gate;
    g = ConsumeGate(*ExpireIfDue(g, kNow + 60'000), kNow + 60'000)->gate;
    UpsertGate(&gates, g);
  }
  UpsertGate(&gates, RequestGate({}, Input("pending"), kNow, 60, "")->gate);
  EXPECT_EQ(gates.size(), kGateConsumedKept + 1);
  EXPECT_EQ(gates.front().gate_id, "g5");
  EXPECT_EQ(gates.back().gate_id, "pending");
}

JournalEntry Entry(const std::string& agent, int64_t seq, const std::string& prev, JournalKind kind,
                   const json& payload) {
  JournalEntry e;
  e.agent_id = agent;
  e.sequence = seq;
  e.kind = kind;
  e.payload = payload.dump();
  e.timestamp_ms = kNow;
  e.prev_sha256 = prev;
  SealJournalEntry(&e);
  return e;
}

TEST(GateFoldTest, GateEntriesFoldIntoTheCheckpointAndSurviveAContextPut) {
  Checkpoint cp;
  cp.agent_id = "a";
  Gate g = RequestGate({}, Input("g"), kNow, 60, "")->gate;
  Gate decided = ResolveGate(g, Resolution("approved", "alice", kHash), kNow)->gate;
  std::vector<JournalEntry> entries;
  entries.push_back(Entry("a", 1, kJournalGenesisSha256, JournalKind::kGateRequest, GateToJson(g)));
  entries.push_back(Entry("a", 2, entries[0].sha256, JournalKind::kContextPut,
                          {{"activeTask", nullptr},
                           {"contextSummary", ContextJsonOf(cp)["contextSummary"]},
                           {"workspace", nullptr}}));
  entries.push_back(
      Entry("a", 3, entries[1].sha256, JournalKind::kGateResolve, GateToJson(decided)));
  JournalFoldReport r = FoldJournal(entries, &cp);
  EXPECT_EQ(r.applied, 3) << r.stop_reason;
  auto gates = GatesFromJson(json::parse(cp.gates));
  ASSERT_TRUE(gates.ok()) << cp.gates;
  ASSERT_EQ(gates->size(), 1u);
  EXPECT_EQ((*gates)[0], decided);
  EXPECT_EQ(ParseJournalKind("gate.consume"), JournalKind::kGateConsume);
}

}  // namespace
}  // namespace agentckpt
