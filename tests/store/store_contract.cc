// The CheckpointStore contract (see store_contract.h for how a backend runs it).
#include "tests/store/store_contract.h"

#include <cstdint>
#include <latch>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/store/store_test_util.h"

namespace agentckpt::testing {

void StoreContractTest::SetUp() {
  dir_ = std::make_unique<TempDir>();
  store_ = GetParam().make(dir_->path());
  ASSERT_NE(store_, nullptr) << "the " << GetParam().name << " factory returned no store";
}

CheckpointStore& StoreContractTest::other_handle() {
  if (!GetParam().reopen) return *store_;
  if (other_ == nullptr) other_ = GetParam().reopen(dir_->path());
  if (other_ == nullptr) {
    ADD_FAILURE() << "the " << GetParam().name << " factory could not reopen the store";
    return *store_;
  }
  return *other_;
}

void StoreContractTest::TearDown() {
  other_.reset();
  store_.reset();
  dir_.reset();
}

namespace {

constexpr int64_t kDayMs = 86400000;
constexpr int kKeepAll = 1000;

StatusOr<PutResult> PutAt(CheckpointStore& store, const std::string& agent, int64_t sequence,
                          int keep = kKeepAll) {
  return store.Put(SealedAt(agent, sequence), PutOptions{keep});
}

std::vector<int64_t> ListedSequences(CheckpointStore& store, const std::string& agent, int limit) {
  std::vector<int64_t> out;
  auto listed = store.List(agent, limit);
  EXPECT_TRUE(listed.ok()) << listed.status().ToString();
  if (listed.ok()) {
    for (const auto& info : *listed) out.push_back(info.sequence_number);
  }
  return out;
}

std::vector<int64_t> Range(int64_t from_high, int64_t to_low) {
  std::vector<int64_t> out;
  for (int64_t s = from_high; s >= to_low; --s) out.push_back(s);
  return out;
}

TEST_P(StoreContractTest, EmptyStoreHasNothing) {
  STORE_EXPECT_CODE(store().GetLatestVerified("agent-a"), kNotFound);
  STORE_EXPECT_CODE(store().GetBySequence("agent-a", 1), kNotFound);
  STORE_EXPECT_CODE(store().GetById("agent-a", TestUuid(1, 1)), kNotFound);
  EXPECT_TRUE(ListedSequences(store(), "agent-a", 10).empty());
  auto agent = store().GetAgent("agent-a");
  STORE_ASSERT_OK(agent);
  EXPECT_EQ(agent->agent_id, "agent-a");
  EXPECT_EQ(agent->status, "");
  EXPECT_EQ(agent->last_sequence, 0);
  auto pruned = store().Prune("agent-a", 1);
  STORE_ASSERT_OK(pruned);
  EXPECT_EQ(*pruned, 0);
  auto expired = store().DeleteExpired(int64_t{1} << 50);
  STORE_ASSERT_OK(expired);
  EXPECT_EQ(*expired, 0);
  STORE_EXPECT_OK(store().Ping());
}

TEST_P(StoreContractTest, PutThenLatestVerifiedReturnsTheSealedDocument) {
  Checkpoint cp = LoadFixtureCheckpoint("checkpoint-16k.json");
  cp.agent_id = "agent-marketing-prod";
  cp.sequence_number = 7;
  SealedCheckpoint sealed = SealForTest(cp);
  auto put = store().Put(sealed, PutOptions{});
  STORE_ASSERT_OK(put);
  EXPECT_EQ(put->pruned, 0);

  auto latest = store().GetLatestVerified("agent-marketing-prod");
  STORE_ASSERT_OK(latest);
  ExpectSameCheckpoint(latest->checkpoint, sealed.doc);
  EXPECT_TRUE(latest->skipped.empty());

  auto listed = store().List("agent-marketing-prod", 10);
  STORE_ASSERT_OK(listed);
  ASSERT_EQ(listed->size(), 1u);
  const CheckpointInfo& info = (*listed)[0];
  EXPECT_EQ(info.checkpoint_id, sealed.doc.checkpoint_id);
  EXPECT_EQ(info.agent_id, "agent-marketing-prod");
  EXPECT_EQ(info.sequence_number, 7);
  EXPECT_EQ(info.timestamp_ms, sealed.doc.timestamp_ms);
  EXPECT_EQ(info.trigger_reason, sealed.doc.trigger_reason);
  EXPECT_EQ(info.size_bytes, sealed.doc.size_bytes);
  EXPECT_EQ(info.expire_at_ms, sealed.doc.expire_at_ms);
  EXPECT_EQ(info.content_sha256, sealed.doc.content_sha256);

  auto agent = store().GetAgent("agent-marketing-prod");
  STORE_ASSERT_OK(agent);
  EXPECT_EQ(agent->last_sequence, 7);
}

// Damaged newest documents whose sequenceNumber does not parse are passed over (and reported),
// however many there are, while an older good one exists.
void ExpectFallbackPastDamagedNewest(StoreContractTest* test, CheckpointStore& store,
                                     int64_t newest, int64_t damaged) {
  std::vector<std::string> ids;
  for (int64_t s = 1; s <= newest; ++s) {
    SealedCheckpoint sealed = SealedAt("agent-a", s);
    ids.push_back(sealed.doc.checkpoint_id);
    STORE_ASSERT_OK(store.Put(sealed, PutOptions{kKeepAll}));
  }
  for (int64_t s = newest; s > newest - damaged; --s) test->Damage("agent-a", ids[s - 1]);
  auto latest = store.GetLatestVerified("agent-a");
  STORE_ASSERT_OK(latest);
  EXPECT_EQ(latest->checkpoint.sequence_number, newest - damaged);
  ASSERT_EQ(latest->skipped.size(), static_cast<size_t>(damaged));
  std::set<std::string> skipped;
  for (const SkippedCheckpoint& s : latest->skipped) skipped.insert(s.checkpoint_id);
  for (int64_t s = newest; s > newest - damaged; --s) EXPECT_EQ(skipped.count(ids[s - 1]), 1u);
}

TEST_P(StoreContractTest, TwoDamagedNewestFallBackToTheGoodOlderOne) {
  ExpectFallbackPastDamagedNewest(this, store(), 5, 2);
}

TEST_P(StoreContractTest, ManyDamagedNewestFallBackToTheGoodOlderOne) {
  ExpectFallbackPastDamagedNewest(this, store(), 16, 14);
}

TEST_P(StoreContractTest, AllDamagedIsNotFound) {
  SealedCheckpoint sealed = SealedAt("agent-a", 1);
  STORE_ASSERT_OK(store().Put(sealed, PutOptions{kKeepAll}));
  Damage("agent-a", sealed.doc.checkpoint_id);
  STORE_EXPECT_CODE(store().GetLatestVerified("agent-a"), kNotFound);
}

TEST_P(StoreContractTest, GetsByIdAndBySequence) {
  std::vector<SealedCheckpoint> sealed;
  for (int64_t s = 1; s <= 3; ++s) {
    sealed.push_back(SealedAt("agent-a", s));
    STORE_ASSERT_OK(store().Put(sealed.back(), PutOptions{}));
  }
  for (const auto& want : sealed) {
    auto by_seq = store().GetBySequence("agent-a", want.doc.sequence_number);
    STORE_ASSERT_OK(by_seq);
    ExpectSameCheckpoint(*by_seq, want.doc);
    auto by_id = store().GetById("agent-a", want.doc.checkpoint_id);
    STORE_ASSERT_OK(by_id);
    ExpectSameCheckpoint(*by_id, want.doc);
  }
}

TEST_P(StoreContractTest, MissingCheckpointsAreNotFound) {
  STORE_ASSERT_OK(PutAt(store(), "agent-a", 1));
  STORE_ASSERT_OK(PutAt(store(), "agent-a", 3));
  STORE_ASSERT_OK(PutAt(store(), "agent-b", 5));
  STORE_EXPECT_CODE(store().GetBySequence("agent-a", 2), kNotFound);
  STORE_EXPECT_CODE(store().GetBySequence("agent-a", 4), kNotFound);
  STORE_EXPECT_CODE(store().GetBySequence("agent-a", 5), kNotFound);  // agent-b's sequence
  STORE_EXPECT_CODE(store().GetById("agent-a", TestUuid(0xabcdef, 42)), kNotFound);
  // An id that exists, but under another agent.
  STORE_EXPECT_CODE(store().GetById("agent-a", MakeCheckpoint("agent-b", 5).checkpoint_id),
                    kNotFound);
  STORE_EXPECT_CODE(store().GetLatestVerified("agent-c"), kNotFound);
}

TEST_P(StoreContractTest, ListsNewestFirstWithLimitAndTrigger) {
  const TriggerReason triggers[] = {TriggerReason::kPeriodic, TriggerReason::kPreCompaction,
                                    TriggerReason::kTaskPhaseChange, TriggerReason::kManual,
                                    TriggerReason::kPreShutdown};
  for (int i = 0; i < 5; ++i) {
    Checkpoint cp = MakeCheckpoint("agent-a", 10 + i);
    cp.trigger_reason = triggers[i];
    STORE_ASSERT_OK(store().Put(SealForTest(cp), PutOptions{}));
  }
  auto top = store().List("agent-a", 3);
  STORE_ASSERT_OK(top);
  ASSERT_EQ(top->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const CheckpointInfo& info = (*top)[i];
    EXPECT_EQ(info.sequence_number, 14 - i);
    EXPECT_EQ(info.trigger_reason, triggers[4 - i]) << TriggerReasonName(info.trigger_reason);
    EXPECT_EQ(info.checkpoint_id, MakeCheckpoint("agent-a", 14 - i).checkpoint_id);
  }
  EXPECT_EQ(ListedSequences(store(), "agent-a", 100), Range(14, 10));
  EXPECT_EQ(ListedSequences(store(), "agent-a", 1), Range(14, 14));
}

TEST_P(StoreContractTest, PutAtAnExistingSequenceConflictsAndKeepsTheStoredOne) {
  SealedCheckpoint first = SealedAt("agent-a", 3);
  STORE_ASSERT_OK(store().Put(first, PutOptions{}));
  Checkpoint other = MakeCheckpoint("agent-a", 3);
  other.checkpoint_id = TestUuid(0x5ec0d, 3);
  other.context_summary.draft_content = "a second writer's draft";
  STORE_EXPECT_CODE(store().Put(SealForTest(other), PutOptions{}), kAlreadyExists);
  // The very same checkpoint again (a retried put) is a conflict too, never an overwrite.
  STORE_EXPECT_CODE(store().Put(first, PutOptions{}), kAlreadyExists);

  auto stored = store().GetBySequence("agent-a", 3);
  STORE_ASSERT_OK(stored);
  ExpectSameCheckpoint(*stored, first.doc);
  STORE_EXPECT_CODE(store().GetById("agent-a", other.checkpoint_id), kNotFound);
  EXPECT_EQ(ListedSequences(store(), "agent-a", 10), Range(3, 3));
}

TEST_P(StoreContractTest, PutBelowTheLastWrittenSequenceConflicts) {
  STORE_ASSERT_OK(PutAt(store(), "agent-a", 5));
  STORE_EXPECT_CODE(PutAt(store(), "agent-a", 3), kAlreadyExists);
  STORE_EXPECT_CODE(PutAt(store(), "agent-a", 4), kAlreadyExists);
  STORE_EXPECT_CODE(store().GetBySequence("agent-a", 3), kNotFound);
  auto agent = store().GetAgent("agent-a");
  STORE_ASSERT_OK(agent);
  EXPECT_EQ(agent->last_sequence, 5);
  STORE_EXPECT_OK(PutAt(store(), "agent-a", 6));
  STORE_EXPECT_OK(PutAt(store(), "agent-a", 9));  // gaps are allowed
  EXPECT_EQ(ListedSequences(store(), "agent-a", 10), (std::vector<int64_t>{9, 6, 5}));
}

TEST_P(StoreContractTest, SameCheckpointIdAtANewSequenceConflicts) {
  SealedCheckpoint first = SealedAt("agent-a", 1);
  STORE_ASSERT_OK(store().Put(first, PutOptions{}));
  Checkpoint again = MakeCheckpoint("agent-a", 2);
  again.checkpoint_id = first.doc.checkpoint_id;
  STORE_EXPECT_CODE(store().Put(SealForTest(again), PutOptions{}), kAlreadyExists);

  STORE_EXPECT_CODE(store().GetBySequence("agent-a", 2), kNotFound);
  auto by_id = store().GetById("agent-a", first.doc.checkpoint_id);
  STORE_ASSERT_OK(by_id);
  ExpectSameCheckpoint(*by_id, first.doc);
  auto agent = store().GetAgent("agent-a");
  STORE_ASSERT_OK(agent);
  EXPECT_EQ(agent->last_sequence, 1);  // the failed put left no trace
  STORE_EXPECT_OK(PutAt(store(), "agent-a", 2));
}

TEST_P(StoreContractTest, RetentionKeepsTheNewest) {
  int pruned_total = 0;
  for (int64_t s = 1; s <= 60; ++s) {
    auto put = PutAt(store(), "agent-a", s, 48);
    STORE_ASSERT_OK(put);
    EXPECT_EQ(put->pruned, s > 48 ? 1 : 0) << "sequence " << s;
    pruned_total += put->pruned;
  }
  EXPECT_EQ(pruned_total, 12);
  EXPECT_EQ(ListedSequences(store(), "agent-a", 100), Range(60, 13));
  STORE_EXPECT_CODE(store().GetBySequence("agent-a", 12), kNotFound);
  STORE_EXPECT_CODE(store().GetById("agent-a", MakeCheckpoint("agent-a", 1).checkpoint_id),
                    kNotFound);
  STORE_EXPECT_OK(store().GetBySequence("agent-a", 13));
  auto latest = store().GetLatestVerified("agent-a");
  STORE_ASSERT_OK(latest);
  EXPECT_EQ(latest->checkpoint.sequence_number, 60);

  // A smaller keep on a later put prunes everything beyond it at once.
  auto put = PutAt(store(), "agent-a", 61, 10);
  STORE_ASSERT_OK(put);
  EXPECT_EQ(put->pruned, 39);
  EXPECT_EQ(ListedSequences(store(), "agent-a", 100), Range(61, 52));
  STORE_EXPECT_CODE(PutAt(store(), "agent-a", 62, 0), kInvalidArgument);
}

TEST_P(StoreContractTest, PruneKeepsTheNewestOfOneAgent) {
  for (int64_t s = 1; s <= 10; ++s) STORE_ASSERT_OK(PutAt(store(), "agent-a", s));
  for (int64_t s = 1; s <= 3; ++s) STORE_ASSERT_OK(PutAt(store(), "agent-b", s));
  auto pruned = store().Prune("agent-a", 3);
  STORE_ASSERT_OK(pruned);
  EXPECT_EQ(*pruned, 7);
  EXPECT_EQ(ListedSequences(store(), "agent-a", 100), Range(10, 8));
  EXPECT_EQ(ListedSequences(store(), "agent-b", 100), Range(3, 1));
  pruned = store().Prune("agent-a", 3);
  STORE_ASSERT_OK(pruned);
  EXPECT_EQ(*pruned, 0);
  pruned = store().Prune("agent-b", 5);
  STORE_ASSERT_OK(pruned);
  EXPECT_EQ(*pruned, 0);
  STORE_EXPECT_CODE(store().Prune("agent-a", 0), kInvalidArgument);
  EXPECT_EQ(ListedSequences(store(), "agent-a", 100), Range(10, 8));
}

TEST_P(StoreContractTest, DeleteExpiredGoesByExpireAt) {
  const int64_t t0 = 1700000000000;  // 2023-11-14T22:13:20Z
  auto put = [&](const std::string& agent, int64_t seq, int ttl_days) {
    Checkpoint cp = MakeCheckpoint(agent, seq);
    cp.timestamp_ms = t0;
    cp.ttl_days = ttl_days;
    return store().Put(SealForTest(cp), PutOptions{});
  };
  STORE_ASSERT_OK(put("agent-a", 1, 1));
  STORE_ASSERT_OK(put("agent-a", 2, 2));
  STORE_ASSERT_OK(put("agent-a", 3, 3));
  STORE_ASSERT_OK(put("agent-b", 1, 1));
  auto listed = store().List("agent-a", 1);
  STORE_ASSERT_OK(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].expire_at_ms, t0 + 3 * kDayMs);

  auto deleted = store().DeleteExpired(t0 + kDayMs - 1);
  STORE_ASSERT_OK(deleted);
  EXPECT_EQ(*deleted, 0);
  deleted = store().DeleteExpired(t0 + 2 * kDayMs);  // expireAt at or before: inclusive
  STORE_ASSERT_OK(deleted);
  EXPECT_EQ(*deleted, 3);
  EXPECT_EQ(ListedSequences(store(), "agent-a", 10), Range(3, 3));
  EXPECT_TRUE(ListedSequences(store(), "agent-b", 10).empty());
  STORE_EXPECT_CODE(store().GetLatestVerified("agent-b"), kNotFound);
  auto latest = store().GetLatestVerified("agent-a");
  STORE_ASSERT_OK(latest);
  EXPECT_EQ(latest->checkpoint.sequence_number, 3);
}

TEST_P(StoreContractTest, AgentRecordKeepsStatusAndSequence) {
  STORE_ASSERT_OK(store().SetAgentStatus("agent-a", "recovering", 1000));
  auto agent = store().GetAgent("agent-a");
  STORE_ASSERT_OK(agent);
  EXPECT_EQ(agent->agent_id, "agent-a");
  EXPECT_EQ(agent->status, "recovering");
  EXPECT_EQ(agent->updated_at_ms, 1000);
  EXPECT_EQ(agent->last_sequence, 0);

  STORE_ASSERT_OK(PutAt(store(), "agent-a", 4));
  agent = store().GetAgent("agent-a");
  STORE_ASSERT_OK(agent);
  EXPECT_EQ(agent->status, "recovering");  // a put does not touch the status
  EXPECT_EQ(agent->last_sequence, 4);

  STORE_ASSERT_OK(store().SetAgentStatus("agent-a", "active", 2000));
  agent = store().GetAgent("agent-a");
  STORE_ASSERT_OK(agent);
  EXPECT_EQ(agent->status, "active");
  EXPECT_EQ(agent->updated_at_ms, 2000);
  EXPECT_EQ(agent->last_sequence, 4);  // setting the status keeps the sequence

  auto other = store().GetAgent("agent-b");
  STORE_ASSERT_OK(other);
  EXPECT_EQ(other->status, "");
  EXPECT_EQ(other->last_sequence, 0);
}

TEST_P(StoreContractTest, SequenceNumbersAreNeverReused) {
  const int64_t t0 = 1600000000000;  // 2020-09-13: long expired
  for (int64_t s = 1; s <= 5; ++s) {
    Checkpoint cp = MakeCheckpoint("agent-a", s);
    cp.timestamp_ms = t0 + s;
    STORE_ASSERT_OK(store().Put(SealForTest(cp), PutOptions{2}));
  }
  auto last = [&] {
    auto agent = store().GetAgent("agent-a");
    EXPECT_TRUE(agent.ok()) << agent.status().ToString();
    return agent.ok() ? agent->last_sequence : -1;
  };
  EXPECT_EQ(last(), 5);
  STORE_ASSERT_OK(store().Prune("agent-a", 1));
  EXPECT_EQ(last(), 5);
  auto deleted = store().DeleteExpired(t0 + 30 * kDayMs);
  STORE_ASSERT_OK(deleted);
  EXPECT_EQ(*deleted, 1);
  EXPECT_EQ(last(), 5);
  STORE_EXPECT_CODE(store().GetLatestVerified("agent-a"), kNotFound);
  // Nothing is left, yet the old sequence numbers stay taken.
  STORE_EXPECT_CODE(PutAt(store(), "agent-a", 5), kAlreadyExists);
  STORE_EXPECT_CODE(PutAt(store(), "agent-a", 1), kAlreadyExists);
  STORE_EXPECT_OK(PutAt(store(), "agent-a", 6));
  EXPECT_EQ(last(), 6);
}

TEST_P(StoreContractTest, AgentsAreIsolated) {
  std::vector<SealedCheckpoint> a, b;
  for (int64_t s = 1; s <= 3; ++s) {
    a.push_back(SealedAt("agent-a", s));
    b.push_back(SealedAt("agent-b", s));
    STORE_ASSERT_OK(store().Put(a.back(), PutOptions{}));
    STORE_ASSERT_OK(store().Put(b.back(), PutOptions{}));
  }
  STORE_ASSERT_OK(PutAt(store(), "agent-b", 4));
  auto latest_a = store().GetLatestVerified("agent-a");
  STORE_ASSERT_OK(latest_a);
  ExpectSameCheckpoint(latest_a->checkpoint, a[2].doc);
  auto b2 = store().GetBySequence("agent-b", 2);
  STORE_ASSERT_OK(b2);
  ExpectSameCheckpoint(*b2, b[1].doc);
  STORE_ASSERT_OK(store().SetAgentStatus("agent-a", "stopped", 5));
  STORE_ASSERT_OK(store().Prune("agent-a", 1));
  EXPECT_EQ(ListedSequences(store(), "agent-a", 10), Range(3, 3));
  EXPECT_EQ(ListedSequences(store(), "agent-b", 10), Range(4, 1));
  auto rec_a = store().GetAgent("agent-a");
  auto rec_b = store().GetAgent("agent-b");
  STORE_ASSERT_OK(rec_a);
  STORE_ASSERT_OK(rec_b);
  EXPECT_EQ(rec_a->last_sequence, 3);
  EXPECT_EQ(rec_b->last_sequence, 4);
  EXPECT_EQ(rec_b->status, "");
}

TEST_P(StoreContractTest, ListAgentsNamesEveryAgentWithARecordInOrder) {
  auto none = store().ListAgents();
  STORE_ASSERT_OK(none);
  EXPECT_TRUE(none->empty());
  STORE_ASSERT_OK(PutAt(store(), "agent-c", 1));
  STORE_ASSERT_OK(PutAt(store(), "agent-a", 1));
  STORE_ASSERT_OK(PutAt(store(), "agent-a", 2));
  STORE_ASSERT_OK(store().SetAgentStatus("agent-b", "stopped", 5));
  auto listed = other_handle().ListAgents();
  STORE_ASSERT_OK(listed);
  EXPECT_EQ(*listed, (std::vector<std::string>{"agent-a", "agent-b", "agent-c"}));
}

TEST_P(StoreContractTest, RacingPutsAtTheSameSequenceHaveOneWinner) {
  for (int64_t round = 1; round <= 20; ++round) {
    SealedCheckpoint mine[2];
    for (int w = 0; w < 2; ++w) {
      Checkpoint cp = MakeCheckpoint("agent-a", round);
      cp.checkpoint_id = TestUuid(0xa0 + w, round);
      cp.context_summary.draft_content = "writer " + std::to_string(w);
      mine[w] = SealForTest(cp);
    }
    Status results[2];
    std::latch start(2);
    std::vector<std::thread> writers;
    for (int w = 0; w < 2; ++w) {
      writers.emplace_back([&, w] {
        start.arrive_and_wait();
        results[w] = StatusOf(store().Put(mine[w], PutOptions{}));
      });
    }
    for (auto& t : writers) t.join();
    int winners = 0, winner = -1;
    for (int w = 0; w < 2; ++w) {
      if (results[w].ok()) {
        ++winners;
        winner = w;
      } else {
        STORE_EXPECT_CODE(results[w], kAlreadyExists);
      }
    }
    ASSERT_EQ(winners, 1) << "round " << round << ": " << results[0].ToString() << " / "
                          << results[1].ToString();
    auto stored = store().GetBySequence("agent-a", round);
    STORE_ASSERT_OK(stored);
    ExpectSameCheckpoint(*stored, mine[winner].doc);
    STORE_EXPECT_CODE(store().GetById("agent-a", mine[1 - winner].doc.checkpoint_id), kNotFound);
  }
  EXPECT_EQ(ListedSequences(store(), "agent-a", 100), Range(20, 1));
}

TEST_P(StoreContractTest, ConcurrentPutsAtDistinctSequencesAllLand) {
  constexpr int kThreads = 4;
  constexpr int kPuts = 15;
  std::vector<Status> failures[kThreads];
  std::latch start(kThreads);
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      std::string agent = "agent-t" + std::to_string(t);
      start.arrive_and_wait();
      for (int64_t s = 1; s <= kPuts; ++s) {
        Status st = StatusOf(PutAt(store(), agent, s));
        if (!st.ok()) failures[t].push_back(st);
      }
    });
  }
  for (auto& t : writers) t.join();
  for (int t = 0; t < kThreads; ++t) {
    std::string agent = "agent-t" + std::to_string(t);
    for (const Status& st : failures[t]) ADD_FAILURE() << agent << ": " << st.ToString();
    EXPECT_EQ(ListedSequences(store(), agent, 100), Range(kPuts, 1)) << agent;
    auto latest = store().GetLatestVerified(agent);
    STORE_ASSERT_OK(latest);
    ExpectSameCheckpoint(latest->checkpoint, SealedAt(agent, kPuts).doc);
    auto rec = store().GetAgent(agent);
    STORE_ASSERT_OK(rec);
    EXPECT_EQ(rec->last_sequence, kPuts);
  }
}

TEST_P(StoreContractTest, RejectsBadArguments) {
  STORE_EXPECT_CODE(store().GetLatestVerified("bad agent/id"), kInvalidArgument);
  STORE_EXPECT_CODE(store().GetAgent(""), kInvalidArgument);
  STORE_EXPECT_CODE(PutAt(store(), "agent-a", 1, 0), kInvalidArgument);
  STORE_EXPECT_CODE(store().GetBySequence("agent-a", 1), kNotFound);  // the bad put left nothing
}

// ---- Writer lease (CheckpointStore::AcquireLease) ----

constexpr int64_t kT0 = 1'700'000'000'000;  // a fixed "now": the clock is the caller's
constexpr int64_t kTtl = 15'000;

StatusOr<PutResult> PutWithLease(CheckpointStore& store, const std::string& agent, int64_t sequence,
                                 const LeaseToken& lease) {
  PutOptions opts{kKeepAll};
  opts.lease = lease;
  return store.Put(SealedAt(agent, sequence), opts);
}

TEST_P(StoreContractTest, LeaseAcquireGrantsEpochOneAndIsRecorded) {
  auto lease = store().AcquireLease("agent-a", "pod-1/aa", kTtl, kT0);
  STORE_ASSERT_OK(lease);
  EXPECT_EQ(lease->holder, "pod-1/aa");
  EXPECT_EQ(lease->epoch, 1);
  EXPECT_EQ(lease->expires_at_ms, kT0 + kTtl);
  auto agent = store().GetAgent("agent-a");
  STORE_ASSERT_OK(agent);
  EXPECT_EQ(agent->lease_holder, "pod-1/aa");
  EXPECT_EQ(agent->lease_epoch, 1);
  EXPECT_EQ(agent->lease_expires_at_ms, kT0 + kTtl);
  // The holder may acquire again: same epoch, later expiry.
  auto again = store().AcquireLease("agent-a", "pod-1/aa", kTtl, kT0 + 1000);
  STORE_ASSERT_OK(again);
  EXPECT_EQ(again->epoch, 1);
  EXPECT_EQ(again->expires_at_ms, kT0 + 1000 + kTtl);
}

TEST_P(StoreContractTest, LeaseIsRefusedToAnotherHolderWhileLive) {
  STORE_ASSERT_OK(store().AcquireLease("agent-a", "pod-1/aa", kTtl, kT0));
  auto refused = other_handle().AcquireLease("agent-a", "pod-2/bb", kTtl, kT0 + kTtl - 1);
  STORE_EXPECT_CODE(refused, kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("lease held by pod-1/aa (epoch 1) until "),
            std::string::npos)
      << refused.status().ToString();
  // Leases are per agent.
  auto other_agent = other_handle().AcquireLease("agent-b", "pod-2/bb", kTtl, kT0);
  STORE_ASSERT_OK(other_agent);
  EXPECT_EQ(other_agent->epoch, 1);
}

TEST_P(StoreContractTest, LeaseRenewExtendsAndKeepsOthersOut) {
  auto lease = store().AcquireLease("agent-a", "pod-1/aa", kTtl, kT0);
  STORE_ASSERT_OK(lease);
  LeaseToken token{lease->holder, lease->epoch};
  auto renewed = store().RenewLease("agent-a", token, kTtl, kT0 + 10'000);
  STORE_ASSERT_OK(renewed);
  EXPECT_EQ(renewed->epoch, 1);
  EXPECT_EQ(renewed->expires_at_ms, kT0 + 10'000 + kTtl);
  // Past the first expiry but within the renewed one: still refused.
  STORE_EXPECT_CODE(other_handle().AcquireLease("agent-a", "pod-2/bb", kTtl, kT0 + kTtl + 1),
                    kFailedPrecondition);
  // Renewing a lease that ran out but was not taken over succeeds.
  STORE_EXPECT_OK(store().RenewLease("agent-a", token, kTtl, kT0 + 60'000));
}

TEST_P(StoreContractTest, LeaseTakeoverAfterExpiryRaisesTheEpochAndFencesTheOldHolder) {
  auto first = store().AcquireLease("agent-a", "pod-1/aa", kTtl, kT0);
  STORE_ASSERT_OK(first);
  LeaseToken old_token{first->holder, first->epoch};
  STORE_ASSERT_OK(PutWithLease(store(), "agent-a", 1, old_token));

  auto second = other_handle().AcquireLease("agent-a", "pod-2/bb", kTtl, kT0 + kTtl);
  STORE_ASSERT_OK(second);
  EXPECT_EQ(second->epoch, 2);
  EXPECT_EQ(second->holder, "pod-2/bb");

  auto renew = store().RenewLease("agent-a", old_token, kTtl, kT0 + kTtl + 1);
  STORE_EXPECT_CODE(renew, kFailedPrecondition);
  EXPECT_NE(renew.status().message().find(
                "lease lost: epoch 1 of holder pod-1/aa taken over by holder pod-2/bb at epoch 2"),
            std::string::npos)
      << renew.status().ToString();
}

// A sidecar restarted after a crash takes its dead predecessor's live lease in one change: the
// epoch rises, the dead holder is fenced, and a holder not known to be dead is left alone.
TEST_P(StoreContractTest, ALiveLeaseOfADeadHolderIsTakenOverInOneChange) {
  auto first = store().AcquireLease("agent-a", "pod-1/100", kTtl, kT0);
  STORE_ASSERT_OK(first);
  LeaseToken dead_token{first->holder, first->epoch};
  STORE_ASSERT_OK(PutWithLease(store(), "agent-a", 1, dead_token));
  std::vector<std::string> asked;
  HolderIsDead alive = [&asked](const std::string& h) {
    asked.push_back(h);
    return false;
  };
  STORE_EXPECT_CODE(
      other_handle().AcquireOrTakeOverLease("agent-a", "pod-1/200", kTtl, kT0 + 1, alive),
      kFailedPrecondition);
  ASSERT_FALSE(asked.empty());  // asked once per decision (a cached record is judged again)
  for (const std::string& h : asked) EXPECT_EQ(h, "pod-1/100");
  HolderIsDead dead = [](const std::string& h) { return h == "pod-1/100"; };
  auto taken = other_handle().AcquireOrTakeOverLease("agent-a", "pod-1/200", kTtl, kT0 + 2, dead);
  STORE_ASSERT_OK(taken);
  EXPECT_EQ(taken->holder, "pod-1/200");
  EXPECT_EQ(taken->epoch, 2);
  EXPECT_EQ(taken->taken_over_from, "pod-1/100");
  STORE_EXPECT_CODE(PutWithLease(store(), "agent-a", 2, dead_token), kFailedPrecondition);
  STORE_EXPECT_OK(PutWithLease(other_handle(), "agent-a", 2, {taken->holder, taken->epoch}));
  // Its own lease again, or a free one: no takeover reported, the predicate not needed.
  auto again = other_handle().AcquireOrTakeOverLease("agent-a", "pod-1/200", kTtl, kT0 + 3, dead);
  STORE_ASSERT_OK(again);
  EXPECT_EQ(again->epoch, 2);
  EXPECT_TRUE(again->taken_over_from.empty());
  auto record = other_handle().GetAgent("agent-a");
  STORE_ASSERT_OK(record);
  EXPECT_EQ(record->lease_holder, "pod-1/200");
  EXPECT_EQ(record->lease_epoch, 2);
}

TEST_P(StoreContractTest, StaleEpochPutIsRejectedAtomically) {
  auto first = store().AcquireLease("agent-a", "pod-1/aa", kTtl, kT0);
  STORE_ASSERT_OK(first);
  LeaseToken old_token{first->holder, first->epoch};
  STORE_ASSERT_OK(PutWithLease(store(), "agent-a", 1, old_token));
  auto second = other_handle().AcquireLease("agent-a", "pod-2/bb", kTtl, kT0 + kTtl + 5);
  STORE_ASSERT_OK(second);
  LeaseToken new_token{second->holder, second->epoch};

  // The old holder's next put (its handle still caches the record from its last write).
  auto stale = PutWithLease(store(), "agent-a", 2, old_token);
  STORE_EXPECT_CODE(stale, kFailedPrecondition);
  EXPECT_NE(stale.status().message().find("lease lost: epoch 1"), std::string::npos)
      << stale.status().ToString();
  // Nothing was written: no checkpoint, no sequence bump.
  EXPECT_EQ(ListedSequences(store(), "agent-a", 10), std::vector<int64_t>({1}));
  STORE_EXPECT_CODE(store().GetBySequence("agent-a", 2), kNotFound);
  auto agent = store().GetAgent("agent-a");
  STORE_ASSERT_OK(agent);
  EXPECT_EQ(agent->last_sequence, 1);
  EXPECT_EQ(agent->lease_epoch, 2);

  // The new holder continues at the next sequence.
  STORE_ASSERT_OK(PutWithLease(other_handle(), "agent-a", 2, new_token));
  STORE_EXPECT_CODE(PutWithLease(store(), "agent-a", 3, old_token), kFailedPrecondition);
  EXPECT_EQ(ListedSequences(store(), "agent-a", 10), std::vector<int64_t>({2, 1}));
}

TEST_P(StoreContractTest, PutWithALeaseNeverTakenIsRejected) {
  STORE_EXPECT_CODE(PutWithLease(store(), "agent-a", 1, LeaseToken{"pod-1/aa", 1}),
                    kFailedPrecondition);
  EXPECT_TRUE(ListedSequences(store(), "agent-a", 10).empty());
}

TEST_P(StoreContractTest, LeaseReleaseLetsTheNextHolderInAtOnce) {
  auto first = store().AcquireLease("agent-a", "pod-1/aa", kTtl, kT0);
  STORE_ASSERT_OK(first);
  LeaseToken token{first->holder, first->epoch};
  STORE_ASSERT_OK(store().ReleaseLease("agent-a", token, kT0 + 1));
  auto agent = store().GetAgent("agent-a");
  STORE_ASSERT_OK(agent);
  EXPECT_EQ(agent->lease_holder, "");
  EXPECT_EQ(agent->lease_epoch, 1);

  auto next = other_handle().AcquireLease("agent-a", "pod-2/bb", kTtl, kT0 + 2);
  STORE_ASSERT_OK(next);
  EXPECT_EQ(next->epoch, 2);
  // Releasing a lease that is no longer current changes nothing.
  STORE_EXPECT_OK(store().ReleaseLease("agent-a", token, kT0 + 3));
  STORE_EXPECT_CODE(store().AcquireLease("agent-a", "pod-3/cc", kTtl, kT0 + 4),
                    kFailedPrecondition);
  // A released lease cannot be renewed.
  STORE_EXPECT_CODE(store().RenewLease("agent-a", token, kTtl, kT0 + 5), kFailedPrecondition);
}

TEST_P(StoreContractTest, LeaseRejectsBadArguments) {
  STORE_EXPECT_CODE(store().AcquireLease("bad id!", "pod-1/aa", kTtl, kT0), kInvalidArgument);
  STORE_EXPECT_CODE(store().AcquireLease("agent-a", "", kTtl, kT0), kInvalidArgument);
  STORE_EXPECT_CODE(store().AcquireLease("agent-a", "pod-1/aa", 0, kT0), kInvalidArgument);
}

TEST_P(StoreContractTest, RacingAcquiresHaveOneWinner) {
  constexpr int kRacers = 4;
  std::vector<StatusOr<Lease>> results(kRacers, InternalError("not run"));
  std::latch go(kRacers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRacers; ++i) {
    threads.emplace_back([&, i] {
      go.arrive_and_wait();
      results[i] = store().AcquireLease("agent-a", "pod-" + std::to_string(i), kTtl, kT0);
    });
  }
  for (auto& t : threads) t.join();
  int winners = 0;
  for (const auto& r : results) {
    if (r.ok()) {
      ++winners;
      EXPECT_EQ(r->epoch, 1);
    } else {
      EXPECT_TRUE(r.status().code() == StatusCode::kFailedPrecondition) << r.status().ToString();
    }
  }
  EXPECT_EQ(winners, 1);
}

}  // namespace
}  // namespace agentckpt::testing
