// FleetCache against the uncached FleetView as the reference, over a real SQLite store: the same
// document whatever was kept, rows computed again after a checkpoint, a journal entry or a new
// writer, and a change no record shows (a checkpoint damaged in place) seen once its row expires.
#include "console/fleet_cache.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "console/console_views.h"
#include "gate/gate_record.h"
#include "journal/journal_entry.h"
#include "tests/store/raw_sqlite.h"
#include "tests/store/store_test_util.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

constexpr int64_t kMaxAge = 30000;

class FleetCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenStore("sqlite://" + dir_.File("store.db"));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    for (const char* agent : {"agent-a", "agent-b", "agent-c"}) {
      for (int64_t s = 1; s <= 3; ++s) ASSERT_TRUE(store_->Put(SealedAt(agent, s), {}).ok());
    }
  }
  // The cache's view at `now`, checked against FleetView at the same instant (the reference: no
  // row kept), with the request's counts returned beside it.
  json ViewAndCompare(FleetCache* cache, int64_t now, int* computed, int* reused) {
    auto cached = cache->View(now);
    EXPECT_TRUE(cached.ok()) << cached.status().ToString();
    auto reference = FleetView(store_.get(), now);
    EXPECT_TRUE(reference.ok()) << reference.status().ToString();
    if (!cached.ok() || !reference.ok()) return json();
    json doc = *cached;
    *computed = doc["rowsComputed"].get<int>();
    *reused = doc["rowsReused"].get<int>();
    doc.erase("rowsComputed");
    doc.erase("rowsReused");
    EXPECT_EQ(doc, *reference);
    return doc;
  }
  // Appends a pending gate request for `agent` as its journal's next entry.
  void AppendGateRequest(const std::string& agent, const std::string& gate_id) {
    auto stats = store_->GetJournalStats(agent);
    ASSERT_TRUE(stats.ok());
    auto entries = store_->ReadJournal(agent, 0);
    ASSERT_TRUE(entries.ok());
    Gate g;
    g.gate_id = gate_id;
    g.reason = "deploy";
    g.created_at_ms = 1000;
    g.expires_at_ms = 1000 + 3600000;
    JournalEntry e;
    e.agent_id = agent;
    e.sequence = stats->last_sequence + 1;
    e.epoch = 1;
    e.kind = JournalKind::kGateRequest;
    e.payload = GateToJson(g).dump();
    e.timestamp_ms = 2000;
    e.prev_sha256 = entries->empty() ? kJournalGenesisSha256 : entries->back().sha256;
    SealJournalEntry(&e);
    ASSERT_TRUE(store_->AppendJournal(agent, {e}, std::nullopt).ok());
  }
  TempDir dir_;
  std::unique_ptr<CheckpointStore> store_;
};

TEST_F(FleetCacheTest, KeptRowsGiveTheSameDocumentAndChangedAgentsAreComputedAgain) {
  FleetCache cache(store_.get(), kMaxAge);
  int computed = 0, reused = 0;
  int64_t now = 1'800'000'000'000;
  ViewAndCompare(&cache, now, &computed, &reused);
  EXPECT_EQ(computed, 3);
  EXPECT_EQ(reused, 0);

  // Nothing changed, a second later: every row kept, ages moved on with the clock.
  json doc = ViewAndCompare(&cache, now + 1000, &computed, &reused);
  EXPECT_EQ(computed, 0);
  EXPECT_EQ(reused, 3);

  // A new checkpoint for agent-b.
  ASSERT_TRUE(store_->Put(SealedAt("agent-b", 4), {}).ok());
  doc = ViewAndCompare(&cache, now + 2000, &computed, &reused);
  EXPECT_EQ(computed, 1);
  EXPECT_EQ(doc["agents"][1]["lastCheckpoint"]["sequenceNumber"], 4);

  // A journal entry (a gate request) for agent-c: its pending gates go up.
  AppendGateRequest("agent-c", "g-1");
  doc = ViewAndCompare(&cache, now + 3000, &computed, &reused);
  EXPECT_EQ(computed, 1);
  EXPECT_EQ(doc["agents"][2]["pendingGates"], 1);

  // A new writer (lease epoch) for agent-a.
  ASSERT_TRUE(store_->AcquireLease("agent-a", "pod-2", 60000, now).ok());
  ViewAndCompare(&cache, now + 4000, &computed, &reused);
  EXPECT_EQ(computed, 1);
  EXPECT_EQ(reused, 2);
}

TEST_F(FleetCacheTest, DamageNoRecordShowsIsSeenOnceTheRowExpires) {
  FleetCache cache(store_.get(), kMaxAge);
  int computed = 0, reused = 0;
  int64_t now = 1'800'000'000'000;
  ViewAndCompare(&cache, now, &computed, &reused);
  {
    RawSqlite raw(dir_.File("store.db"));
    ASSERT_TRUE(raw.Exec("UPDATE checkpoints SET document = x'00' WHERE agent_id = 'agent-a' "
                         "AND sequence = 3"));
  }
  // Before the earliest expiry (max_age / 2) the kept row still says 0 corrupted.
  auto early = cache.View(now + kMaxAge / 2 - 1);
  ASSERT_TRUE(early.ok());
  EXPECT_EQ((*early)["rowsComputed"], 0);
  EXPECT_EQ((*early)["agents"][0]["corrupted"], 0);
  // At max_age every row has expired: the damage shows, as FleetView shows it.
  json doc = ViewAndCompare(&cache, now + kMaxAge, &computed, &reused);
  EXPECT_EQ(computed, 3);
  EXPECT_EQ(doc["agents"][0]["corrupted"], 1);
  EXPECT_EQ(doc["agents"][0]["lastCheckpoint"]["sequenceNumber"], 2);
}

TEST_F(FleetCacheTest, ZeroMaxAgeComputesEveryRowEveryTime) {
  FleetCache cache(store_.get(), 0);
  int computed = 0, reused = 0;
  for (int i = 0; i < 3; ++i) {
    ViewAndCompare(&cache, 1'800'000'000'000 + i, &computed, &reused);
    EXPECT_EQ(computed, 3);
    EXPECT_EQ(reused, 0);
  }
}

}  // namespace
}  // namespace agentckpt::testing
