// JournalWriter with ContextState on a real SQLite store: group commit, fencing, failures,
// async mode and the journal's size bound under forced checkpoints.
#include "context/journal_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <thread>

#include "context/checkpoint_writer.h"
#include "context/context_state.h"
#include "store/journal_load.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/support/forwarding_store.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

using nlohmann::json;

constexpr char kAgent[] = "agent-jw";

// Forwards to a real store; AppendJournal can be held at a gate, failed, and is counted.
class GatedStore : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  bool SupportsJournal() const override { return true; }
  Status AppendJournal(const std::string& a, const std::vector<JournalEntry>& entries,
                       const std::optional<LeaseToken>& lease) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      batches.push_back(static_cast<int>(entries.size()));
      in_append_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return !held_; });
      in_append_ = false;
      if (!fail.ok()) return fail;
    }
    return ForwardingStore::AppendJournal(a, entries, lease);
  }
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = true;
  }
  void WaitInAppend() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return in_append_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
    cv_.notify_all();
  }
  std::vector<int> batches;  // entries per append call
  Status fail;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
  bool in_append_ = false;
};

class JournalWriterTest : public ::testing::Test {
 protected:
  void Open(const std::string& path, JournalOptions o = {}) {
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::make_unique<GatedStore>(std::move(s).value());
    auto lease = store_->AcquireLease(kAgent, "h", 600000, Env::Default()->NowUnixMillis());
    ASSERT_TRUE(lease.ok());
    lease_ = LeaseToken{lease->holder, lease->epoch};
    o.agent_id = kAgent;
    journal_ = std::make_unique<JournalWriter>(Env::Default(), store_.get(), o);
    context_.set_journal(
        [this](JournalKind k, const std::string& p) { return journal_->Record(k, p); });
  }
  void Activate() { journal_->Activate(lease_, {0, kJournalGenesisSha256}, 0, 0); }
  StatusOr<ContextUpdate> Patch(int step) {
    return context_.MergePatch(json{{"contextSummary", {{"completedSteps", step}}}});
  }
  // The context a restart would see: checkpoint (none here) plus the stored journal.
  json Restored() {
    Checkpoint cp;
    cp.agent_id = kAgent;
    auto latest = store_->GetLatestVerified(kAgent);
    if (latest.ok()) cp = latest->checkpoint;
    FoldStoredJournal(store_.get(), &cp);
    return ContextJsonOf(cp);
  }

  testing::TempDir dir_;
  std::unique_ptr<GatedStore> store_;
  LeaseToken lease_;
  ContextState context_;
  std::unique_ptr<JournalWriter> journal_;
};

TEST_F(JournalWriterTest, StandbyRefusesBeforeActivate) {
  Open(dir_.File("s.db"));
  auto u = Patch(1);
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(u.status().message().rfind("standby", 0), 0u);
  EXPECT_EQ(context_.Snapshot().revision, 0u);  // refused: the context did not change
}

TEST_F(JournalWriterTest, ConcurrentUpdatesShareOneCommit) {
  Open(dir_.File("s.db"));
  Activate();
  store_->Hold();
  auto first = Patch(1);
  ASSERT_TRUE(first.ok());
  std::thread committer([&] { EXPECT_TRUE(journal_->Await(first->journal_sequence).ok()); });
  store_->WaitInAppend();  // the first update is being committed
  std::vector<std::thread> waiters;
  std::atomic<int> durable{0};
  for (int i = 2; i <= 9; ++i) {
    auto u = Patch(i);  // recorded while the first commit runs
    ASSERT_TRUE(u.ok());
    waiters.emplace_back([&, seq = u->journal_sequence] {
      auto ack = journal_->Await(seq);
      if (ack.ok() && ack->durable) ++durable;
    });
  }
  store_->Release();
  committer.join();
  for (auto& t : waiters) t.join();
  EXPECT_EQ(durable.load(), 8);
  EXPECT_EQ(store_->batches, (std::vector<int>{1, 8}));  // the 8 shared the second commit
  EXPECT_EQ(Restored(), context_.ToJson());
}

// Eight writers updating at once, so that commits follow each other with waiters of two groups
// asleep (the group being committed and the next one, whose committer a commit wakes alone):
// every update is acknowledged durable, none is appended twice, and the store restores the live
// context. A lost wake-up would leave a writer waiting for ever (the test's timeout).
TEST_F(JournalWriterTest, WritersOfSuccessiveGroupsAreAllAcknowledgedDurable) {
  Open(dir_.File("s.db"));
  Activate();
  constexpr int kWriters = 8;
  constexpr int kEach = 150;
  std::atomic<int> durable{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kEach; ++i) {
        auto u = context_.MergePatch(json{{"contextSummary", {{"completedSteps", w * kEach + i}}},
                                          {"activeTask",
                                           {{"taskId", "t" + std::to_string(w)},
                                            {"title", "writer"},
                                            {"phase", "executing"},
                                            {"progress", i % 100},
                                            {"startedAt", "2026-11-27T00:00:00Z"}}}});
        if (!u.ok()) continue;
        auto ack = journal_->Await(u->journal_sequence);
        if (ack.ok() && ack->durable) ++durable;
      }
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(durable.load(), kWriters * kEach);
  int appended = 0;
  for (int n : store_->batches) appended += n;
  EXPECT_EQ(appended, journal_->head().sequence);  // each entry appended once
  EXPECT_EQ(journal_->durable_sequence(), journal_->head().sequence);
  EXPECT_EQ(Restored(), context_.ToJson());
}

TEST_F(JournalWriterTest, AFailedAppendIsNotAcknowledgedAndACheckpointRepairsTheJournal) {
  Open(dir_.File("s.db"));
  Activate();
  auto ok = Patch(1);
  ASSERT_TRUE(journal_->Await(ok->journal_sequence).ok());
  store_->fail = UnavailableError("disk full");
  auto u = Patch(2);
  ASSERT_TRUE(u.ok());
  auto ack = journal_->Await(u->journal_sequence);
  EXPECT_EQ(ack.status().code(), StatusCode::kUnavailable);
  auto refused = Patch(3);
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find("journal unavailable"), std::string::npos);
  store_->fail = OkStatus();
  journal_->CheckpointWritten(journal_->head().sequence);  // covers everything recorded
  auto again = Patch(4);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(journal_->Await(again->journal_sequence)->durable);
}

// A reader (GET /v1/context) that sees a change still being appended waits until it is durable,
// and gets the append's error if it fails: it never acts on a state a SIGKILL would take back.
// The stored journal, read as a restart would, is the reference.
TEST_F(JournalWriterTest, AReaderOfTheContextWaitsUntilWhatItSawIsDurable) {
  Open(dir_.File("s.db"));
  Activate();
  store_->Hold();
  auto u = Patch(7);
  ASSERT_TRUE(u.ok());
  std::thread writer([&] { EXPECT_TRUE(journal_->Await(u->journal_sequence).ok()); });
  store_->WaitInAppend();  // the change is visible, its append in progress
  auto reader = std::async(std::launch::async, [&] {
    json shown = context_.ToJson();
    Status durable = journal_->AwaitRecorded();
    return std::make_pair(shown, durable);
  });
  // Not a speed bound: while the append is held, the reader cannot have returned.
  EXPECT_EQ(reader.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  EXPECT_NE(Restored()["contextSummary"]["completedSteps"], 7);  // not in the store yet
  store_->Release();
  auto [shown, durable] = reader.get();
  writer.join();
  ASSERT_TRUE(durable.ok()) << durable.ToString();
  EXPECT_EQ(shown["contextSummary"]["completedSteps"], 7);
  EXPECT_EQ(Restored()["contextSummary"]["completedSteps"], 7);

  // A failed append: the reader that saw the change gets the error, not the state.
  store_->fail = UnavailableError("disk full");
  auto lost = Patch(8);
  ASSERT_TRUE(lost.ok());
  EXPECT_EQ(context_.ToJson()["contextSummary"]["completedSteps"], 8);
  Status after_failure = journal_->AwaitRecorded();
  EXPECT_EQ(after_failure.code(), StatusCode::kUnavailable) << after_failure.ToString();
  EXPECT_EQ(Restored()["contextSummary"]["completedSteps"], 7);
}

// The checkpoint forced after a failed append fails too (the store is still down): the journal
// asks for it again, and says it needs repair until a checkpoint covers what it recorded.
TEST_F(JournalWriterTest, AFailedRepairIsAskedForAgainUntilACheckpointCoversTheJournal) {
  Open(dir_.File("s.db"));
  std::vector<std::string> forced;
  std::vector<std::string> requested;
  journal_->set_force_checkpoint([&](const std::string& reason) { forced.push_back(reason); });
  journal_->set_request_checkpoint([&](const std::string& reason) { requested.push_back(reason); });
  Activate();
  EXPECT_FALSE(journal_->NeedsRepair());
  store_->fail = UnavailableError("disk full");
  auto u = Patch(1);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(journal_->Await(u->journal_sequence).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(forced, std::vector<std::string>{"journal_unavailable"});
  EXPECT_EQ(requested, std::vector<std::string>{"journal_unavailable"});
  EXPECT_TRUE(journal_->NeedsRepair());
  store_->fail = OkStatus();
  journal_->CheckpointWritten(journal_->head().sequence);
  EXPECT_FALSE(journal_->NeedsRepair());
  auto again = Patch(2);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(journal_->Await(again->journal_sequence)->durable);
}

TEST_F(JournalWriterTest, ALostLeaseFencesTheWriter) {
  Open(dir_.File("s.db"));
  Activate();
  ASSERT_TRUE(store_
                  ->AcquireOrTakeOverLease(kAgent, "other", 600000, Env::Default()->NowUnixMillis(),
                                           [](const std::string&) { return true; })
                  .ok());
  auto u = Patch(1);
  ASSERT_TRUE(u.ok());
  auto ack = journal_->Await(u->journal_sequence);
  EXPECT_EQ(ack.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ack.status().message().rfind("lease lost", 0), 0u);
  EXPECT_EQ(Patch(2).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(store_->ReadJournal(kAgent, 0)->empty());
}

// The store accepted the append, but the lease could not be confirmed before the answer: the
// update is not acknowledged durable (409 when the lease is gone, 503 when nobody can say).
TEST_F(JournalWriterTest, AnAppendIsAnsweredOnlyOnceTheLeaseIsConfirmed) {
  Open(dir_.File("s.db"));
  Status confirm = OkStatus();
  int confirms = 0;
  journal_->set_confirm_lease([&] {
    ++confirms;
    return confirm;
  });
  Activate();
  auto ok = Patch(1);
  ASSERT_TRUE(journal_->Await(ok->journal_sequence).ok());
  EXPECT_EQ(confirms, 1);
  confirm = UnavailableError("cannot confirm the writer lease: store unreachable");
  auto unsure = Patch(2);
  ASSERT_TRUE(unsure.ok());
  EXPECT_EQ(journal_->Await(unsure->journal_sequence).status().code(), StatusCode::kUnavailable);
  confirm = OkStatus();
  journal_->CheckpointWritten(journal_->head().sequence);  // repairs the journal
  confirm = FailedPreconditionError("lease lost: epoch 1 of holder h taken over");
  auto lost = Patch(3);
  ASSERT_TRUE(lost.ok());
  auto ack = journal_->Await(lost->journal_sequence);
  EXPECT_EQ(ack.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ack.status().message().rfind("lease lost", 0), 0u) << ack.status().ToString();
  EXPECT_EQ(Patch(4).status().code(), StatusCode::kFailedPrecondition);  // fenced for good
  EXPECT_EQ(confirms, 3);
}

TEST_F(JournalWriterTest, AsyncRepliesFirstAndCloseFlushes) {
  JournalOptions o;
  o.durability = Durability::kAsync;
  Open(dir_.File("s.db"), o);
  Activate();
  int64_t last = 0;
  for (int i = 1; i <= 20; ++i) {
    auto u = Patch(i);
    ASSERT_TRUE(u.ok());
    auto ack = journal_->Await(u->journal_sequence);
    ASSERT_TRUE(ack.ok());
    last = ack->sequence;
  }
  ASSERT_TRUE(journal_->Close().ok());
  EXPECT_EQ(journal_->durable_sequence(), last);
  EXPECT_EQ(Restored(), context_.ToJson());
}

TEST_F(JournalWriterTest, MemoryModeAppendsNothing) {
  JournalOptions o;
  o.durability = Durability::kMemory;
  Open(dir_.File("s.db"), o);
  Activate();
  auto u = Patch(1);
  ASSERT_TRUE(u.ok());
  auto ack = journal_->Await(u->journal_sequence);
  ASSERT_TRUE(ack.ok());
  EXPECT_FALSE(ack->durable);
  EXPECT_TRUE(store_->batches.empty());
}

// 100,000 updates with forced checkpoints: the journal never holds more than the tails of the
// two newest checkpoints, and what is stored always restores the live context. The file lives in
// /dev/shm when there is one (fsync there is free; the bound does not depend on the disk).
// Under the sanitizers (CI's builds, 3-15 times slower) the run is 20,000 updates with a bound of
// 200, the same 100 compaction cycles; AGENTCKPT_JOURNAL_BOUND_UPDATES sets the count (the bound
// is always a hundredth of it).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int64_t kDefaultBoundUpdates = 20000;
#else
constexpr int64_t kDefaultBoundUpdates = 100000;
#endif

int64_t BoundUpdates() {
  const char* v = std::getenv("AGENTCKPT_JOURNAL_BOUND_UPDATES");
  int64_t n = v != nullptr ? std::atoll(v) : 0;
  return n >= 1000 ? n : kDefaultBoundUpdates;
}

// At 7/8 of the bound the journal asks for a checkpoint without waiting for it: the update that
// crosses it is already durable and its committer goes on. If no checkpoint comes, the bound
// itself still forces one before the next group commits; when one comes, nothing is forced.
TEST_F(JournalWriterTest, NearItsBoundTheJournalAsksForACheckpointWithoutWaitingForIt) {
  JournalOptions o;
  o.max_entries = 8;
  Open(dir_.File("early.db"), o);
  Metrics metrics;
  WriterOptions wo;
  wo.agent_id = kAgent;
  CheckpointWriter writer(Env::Default(), store_.get(), &context_, &metrics, wo, {}, {},
                          [](const std::string&, const json&) {});
  writer.RequireLease([](const Status&) {});
  writer.SetLease(lease_);
  writer.SetJournal([this](int64_t s) { journal_->CheckpointWritten(s); }, 0);
  std::vector<int64_t> requested_at;  // the durable sequence when each request came
  std::vector<std::string> forced;
  journal_->set_request_checkpoint([&](const std::string& reason) {
    EXPECT_EQ(reason, "journal_full");
    requested_at.push_back(journal_->durable_sequence());
  });
  journal_->set_force_checkpoint([&](const std::string& reason) {
    forced.push_back(reason);
    ASSERT_TRUE(writer.WriteForced(reason).ok());
  });
  Activate();
  auto update = [&](int step) {
    auto u = Patch(step);
    ASSERT_TRUE(u.ok()) << u.status().ToString();
    auto ack = journal_->Await(u->journal_sequence);
    ASSERT_TRUE(ack.ok() && ack->durable);
  };
  for (int i = 1; i <= 6; ++i) update(i);
  EXPECT_TRUE(requested_at.empty());
  update(7);  // 7 of 8: asked for, once, after the entry was durable
  EXPECT_EQ(requested_at, (std::vector<int64_t>{7}));
  EXPECT_TRUE(forced.empty());
  update(8);  // nobody wrote the checkpoint asked for: the bound forces one
  EXPECT_EQ(requested_at.size(), 1u);
  EXPECT_EQ(forced, (std::vector<std::string>{"journal_full"}));
  EXPECT_EQ(journal_->Lag().entries_since_checkpoint, 0);
  // Now the checkpoint asked for is written each time (here by the test, as the sidecar's
  // periodic thread does): the tail never reaches the bound and nothing is forced again.
  for (int i = 9; i <= 40; ++i) {
    update(i);
    if (requested_at.size() > 1 && requested_at.back() == i) {
      ASSERT_TRUE(writer.WriteForced("journal_full").ok());
    }
  }
  EXPECT_EQ(requested_at, (std::vector<int64_t>{7, 15, 22, 29, 36}));
  EXPECT_EQ(forced.size(), 1u);
  EXPECT_EQ(Restored(), context_.ToJson());
}

TEST_F(JournalWriterTest, OneHundredThousandUpdatesNeverGrowTheJournalPastItsBound) {
  const int64_t kUpdates = BoundUpdates();
  const int64_t kMax = kUpdates / 100;
  testing::TempDir shm_dir;
  std::string path = dir_.File("bound.db");
  std::string shm = "/dev/shm/agentckpt-journal-bound-" + std::to_string(getpid()) + ".db";
  if (std::FILE* f = std::fopen(shm.c_str(), "w")) {
    std::fclose(f);
    std::remove(shm.c_str());
    path = shm;
  }
  JournalOptions o;
  o.max_entries = kMax;
  Open(path, o);
  Metrics metrics;
  WriterOptions wo;
  wo.agent_id = kAgent;
  wo.keep = 3;
  CheckpointWriter writer(Env::Default(), store_.get(), &context_, &metrics, wo, {}, {},
                          [](const std::string&, const json&) {});
  writer.RequireLease([](const Status&) {});
  writer.SetLease(lease_);
  writer.SetJournal([this](int64_t s) { journal_->CheckpointWritten(s); }, 0);
  journal_->set_force_checkpoint(
      [&](const std::string& reason) { ASSERT_TRUE(writer.WriteForced(reason).ok()); });
  Activate();
  int64_t max_seen = 0;
  for (int64_t i = 1; i <= kUpdates; ++i) {
    auto u = (i % 3 == 0) ? context_.AppendToolCall(json{{"toolName", "t"},
                                                         {"timestamp", "2026-01-01T00:00:00.000Z"},
                                                         {"inputSummary", std::to_string(i)},
                                                         {"outputSummary", "o"},
                                                         {"durationMs", 1},
                                                         {"success", true}})
                          : Patch(i);
    ASSERT_TRUE(u.ok()) << u.status().ToString();
    ASSERT_TRUE(journal_->Await(u->journal_sequence)->durable);
    if (i % 97 == 0 || i > kUpdates - 100) {
      auto stats = store_->GetJournalStats(kAgent);
      ASSERT_TRUE(stats.ok());
      max_seen = std::max(max_seen, stats->entries);
      ASSERT_LE(stats->entries, 2 * kMax) << "after update " << i;
    }
  }
  EXPECT_GT(max_seen, kMax / 2);  // the check saw a real tail
  EXPECT_EQ(Restored(), context_.ToJson());
  journal_.reset();
  store_.reset();
  if (path == shm) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((shm + suffix).c_str());
  }
}

}  // namespace
}  // namespace agentckpt
