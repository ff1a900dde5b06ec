// ResolveGateInStore (the offline `agentckpt gate` decision) on a real SQLite store with a fake
// clock: a decision written after a pause past the lease's window counts only once the lease is
// confirmed, and is reported "lease lost" when a sidecar took the lease over meanwhile.
#include "cli/gate_store.h"

#include <gtest/gtest.h>

#include <functional>

#include "common/fake_env.h"
#include "journal/journal_entry.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/support/forwarding_store.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

constexpr char kAgent[] = "agent-gs";

// Forwards to a real store; counts lease renewals and runs `after_append` once an append the
// store accepted returns (the moment a paused process would resume).
class PausingStore : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  StatusOr<Lease> RenewLease(const std::string& a, const LeaseToken& t, int64_t ttl,
                             int64_t now) override {
    ++renewals;
    return ForwardingStore::RenewLease(a, t, ttl, now);
  }
  Status AppendJournal(const std::string& a, const std::vector<JournalEntry>& entries,
                       const std::optional<LeaseToken>& lease) override {
    Status st = ForwardingStore::AppendJournal(a, entries, lease);
    if (st.ok() && after_append) after_append();
    return st;
  }

  int renewals = 0;
  std::function<void()> after_append;
};

class GateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = SqliteStore::Open(dir_.path() + "/store.db");
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    sqlite_ = std::move(*opened);
    store_ = std::make_unique<PausingStore>(sqlite_.get());
    // A pending gate, written the way a sidecar writes one: a gate.request entry under a lease
    // that the sidecar then gave up.
    auto lease = sqlite_->AcquireLease(kAgent, "pod-a/1", 30'000, env_.NowUnixMillis());
    ASSERT_TRUE(lease.ok()) << lease.status().ToString();
    Gate g;
    g.gate_id = "g1";
    g.reason = "deploy to production";
    g.created_at_ms = env_.NowUnixMillis();
    g.expires_at_ms = env_.NowUnixMillis() + 3'600'000;
    JournalEntry e;
    e.agent_id = kAgent;
    e.sequence = 1;
    e.epoch = lease->epoch;
    e.kind = JournalKind::kGateRequest;
    e.payload = GateToJson(g).dump();
    e.timestamp_ms = env_.NowUnixMillis();
    e.prev_sha256 = kJournalGenesisSha256;
    SealJournalEntry(&e);
    const LeaseToken token{lease->holder, lease->epoch};
    ASSERT_TRUE(sqlite_->AppendJournal(kAgent, {e}, token).ok());
    ASSERT_TRUE(sqlite_->ReleaseLease(kAgent, token, env_.NowUnixMillis()).ok());
  }
  static GateResolution Approve() {
    GateResolution r;
    r.gate_id = "g1";
    r.decision = GateState::kApproved;
    r.by = "alice";
    return r;
  }

  testing::TempDir dir_;
  FakeEnv env_;
  std::unique_ptr<CheckpointStore> sqlite_;
  std::unique_ptr<PausingStore> store_;
};

TEST_F(GateStoreTest, ADecisionWithoutAPauseCostsNoRenewal) {
  auto gate = ResolveGateInStore(store_.get(), &env_, kAgent, Approve());
  ASSERT_TRUE(gate.ok()) << gate.status().ToString();
  EXPECT_EQ(gate->state, GateState::kApproved);
  EXPECT_EQ(store_->renewals, 0);
}

// Paused for 25 s (past 2/3 of the 30 s ttl) between taking the lease and the append, with
// nobody taking the lease meanwhile: one renewal confirms it and the decision stands.
TEST_F(GateStoreTest, APausedDecisionIsConfirmedByARenewal) {
  store_->after_append = [this] { env_.AdvanceMicros(25'000'000); };
  auto gate = ResolveGateInStore(store_.get(), &env_, kAgent, Approve());
  ASSERT_TRUE(gate.ok()) << gate.status().ToString();
  EXPECT_EQ(store_->renewals, 1);
  auto gates = LoadGatesFromStore(store_.get(), kAgent);
  ASSERT_TRUE(gates.ok()) << gates.status().ToString();
  ASSERT_EQ(gates->size(), 1u);
  EXPECT_EQ((*gates)[0].state, GateState::kApproved);
}

// Paused past the ttl while a sidecar took the lease over: the store had accepted the entry
// (as Firestore can for a writer fenced out long ago), but the command must not say it decided.
TEST_F(GateStoreTest, ADecisionWhoseLeaseWasTakenOverIsReportedLost) {
  store_->after_append = [this] {
    env_.AdvanceMicros(31'000'000);
    ASSERT_TRUE(sqlite_->AcquireLease(kAgent, "pod-b/2", 30'000, env_.NowUnixMillis()).ok());
  };
  auto gate = ResolveGateInStore(store_.get(), &env_, kAgent, Approve());
  ASSERT_FALSE(gate.ok());
  EXPECT_EQ(gate.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(gate.status().message().rfind("lease lost", 0), 0u) << gate.status().ToString();
  EXPECT_NE(gate.status().message().find("gate list"), std::string::npos);
  // The new holder's lease is untouched by the command's release.
  auto record = sqlite_->GetAgent(kAgent);
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->lease_holder, "pod-b/2");
}

}  // namespace
}  // namespace agentckpt
