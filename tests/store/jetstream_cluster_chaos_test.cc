// Node kills under load on a 3-node JetStream cluster (R3 streams): a writer thread appends
// journal entries and puts checkpoints that compact the journal (as the sidecar does), under the
// agent's lease, while the test SIGKILLs one nats-server at a time (twice the leader of the
// agents stream, twice a random node) and restarts it. A write may fail during a failover, but
// only with kUnavailable (the writer then re-reads where the store stands and goes on); every
// write the store acknowledged must read back afterwards, verified, with no gap in the journal.
// Puts keep the newest kKeep checkpoints, so documents are removed throughout; after every
// restart the retained ones must all read back (nats-server 2.9.10 lost them when the store
// removed documents with stream purges: see jetstream_cluster_restart_test.cc).
// With each node down and again with all three up, a new store handle does the reads a
// recovering sidecar does (GetLatestVerified + ReadJournal) and their time is reported.
//
// The schedule is seeded (AGENTCKPT_CRASH_SEED overrides it) and the seed is printed. The suite
// runs 4 rounds; AGENTCKPT_CHAOS_ROUNDS sets more for a long run
// (docs/jetstream-store.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/canonical.h"
#include "store/jetstream/jetstream_store.h"
#include "tests/store/store_test_util.h"
#include "tests/support/nats_cluster.h"

namespace agentckpt::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kAgent[] = "agent-js-chaos";
constexpr char kPrefix[] = "CHAOS";
constexpr char kHolder[] = "writer";
constexpr int kDefaultRounds = 4;
constexpr int kKeep = 12;  // every put prunes once 12 are stored
// Leader failover takes 4-8 s on nats-server 2.9: every store call may retry this long.
constexpr int64_t kRetryMs = 30000;
constexpr int kHealthyTimeoutMs = 30000;
// Opening a handle while a stream has no leader can fail with kUnavailable (the stream info
// request is answered with an error, not retried): tried again until this deadline.
constexpr int kOpenDeadlineMs = 45000;
// The writer's pause between writes: keeps the agent record (which lists every checkpoint, as
// nothing is pruned) and the final read-back small on a busy 2-core machine.
constexpr int kWritePauseMs = 10;
constexpr int64_t kNowMs = 1'700'000'000'000;
constexpr int64_t kLeaseTtlMs = 24LL * 3600 * 1000;
constexpr int kMinAckedEntries = 30;
constexpr int kMinAckedCheckpoints = 10;
constexpr int64_t kStallMs = 2000;  // a write slower than this is reported

int64_t MsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

void SleepMs(int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

int Rounds() {
  const char* s = std::getenv("AGENTCKPT_CHAOS_ROUNDS");
  const int n = s != nullptr ? std::atoi(s) : 0;
  return n > 0 ? n : kDefaultRounds;
}

uint64_t ChaosSeed() {
  const char* s = std::getenv("AGENTCKPT_CRASH_SEED");
  if (s != nullptr && *s != '\0') return std::strtoull(s, nullptr, 10);
  return static_cast<uint64_t>(std::random_device{}()) << 32 | std::random_device{}();
}

StatusOr<std::unique_ptr<JetStreamStore>> OpenOnce(const std::string& servers) {
  JetStreamStoreOptions o;
  o.api.servers = servers;
  o.api.retry_ms = kRetryMs;
  o.prefix = kPrefix;
  o.replicas = 3;
  o.create = true;
  return JetStreamStore::Open(std::move(o));
}

// Opens a handle, trying again on kUnavailable until kOpenDeadlineMs (each attempt is itself
// bounded by kRetryMs per request).
StatusOr<std::unique_ptr<JetStreamStore>> OpenStore(const std::string& servers) {
  const Clock::time_point start = Clock::now();
  for (;;) {
    StatusOr<std::unique_ptr<JetStreamStore>> store = OpenOnce(servers);
    if (store.ok() || store.status().code() != StatusCode::kUnavailable ||
        MsSince(start) > kOpenDeadlineMs) {
      return store;
    }
    SleepMs(200);
  }
}

std::string CheckpointIdAt(int64_t sequence) {
  return TestUuid(0xc4a05, static_cast<uint64_t>(sequence));
}

Checkpoint DocAt(int64_t sequence, const JournalEntry& through) {
  Checkpoint cp = MakeCheckpoint(kAgent, sequence);
  cp.checkpoint_id = CheckpointIdAt(sequence);
  cp.journal = JournalPosition{through.sequence, through.sha256};
  return cp;
}

// What the writer was told: acknowledged writes and failed ones.
struct WriteLog {
  std::mutex mu;
  std::map<int64_t, std::string> entries;          // acknowledged journal entry sequence -> sha256
  std::vector<int64_t> checkpoints;                // acknowledged checkpoint sequences, ascending
  int failed_appends = 0;                          // kUnavailable
  int failed_puts = 0;                             // kUnavailable
  int failed_resyncs = 0;                          // reads after a failed write, kUnavailable
  std::string fatal;                               // the first error that is not kUnavailable
  const Clock::time_point created = Clock::now();  // t=0 of the times reported
  int64_t slowest_write_ms = 0;                    // the longest a single append or put took
  std::vector<std::string> stalls;                 // writes that took over kStallMs

  void Timed(const std::string& what, Clock::time_point start) {
    const int64_t ms = MsSince(start);
    std::lock_guard<std::mutex> lock(mu);
    slowest_write_ms = std::max(slowest_write_ms, ms);
    if (ms > kStallMs) {
      stalls.push_back(what + ": " + std::to_string(ms) +
                       " ms from t=" + std::to_string(MsSince(created) - ms) + " ms");
    }
  }

  int64_t LastEntry() {
    std::lock_guard<std::mutex> lock(mu);
    return entries.empty() ? 0 : entries.rbegin()->first;
  }
  int64_t LastCheckpoint() {
    std::lock_guard<std::mutex> lock(mu);
    return checkpoints.empty() ? 0 : checkpoints.back();
  }
  std::vector<std::string> unavailable;  // what each kUnavailable failure said (t, write)
  void Fatal(const std::string& what, const Status& s) {
    std::lock_guard<std::mutex> lock(mu);
    if (!fatal.empty()) return;
    fatal = "at t=" + std::to_string(MsSince(created)) + " ms, " + what + ": " + s.ToString() +
            " (after " + std::to_string(failed_appends) + " failed appends, " +
            std::to_string(failed_puts) + " failed puts, " + std::to_string(failed_resyncs) +
            " failed re-reads";
    for (const std::string& u : unavailable) fatal += "; " + u;
    fatal += ")";
  }
  // Call with mu held.
  void NoteUnavailable(const std::string& what, const Status& s) {
    unavailable.push_back("t=" + std::to_string(MsSince(created)) + " ms " + what + ": " +
                          s.ToString());
  }
};

// For a report of an append the store refused with an error other than kUnavailable: what
// the journal holds at `sent`'s sequence (is it this very entry?) and its last raw messages.
std::string DescribeJournalAt(JetStreamStore* store, const JournalEntry& sent) {
  std::string out;
  StatusOr<std::vector<JournalEntry>> read = store->ReadJournal(kAgent, sent.sequence - 1);
  if (!read.ok()) {
    out += "; reading the journal back: " + read.status().ToString();
  } else if (read->empty() || read->front().sequence != sent.sequence) {
    out += "; entry " + std::to_string(sent.sequence) + " is not stored";
  } else {
    out += std::string("; entry ") + std::to_string(sent.sequence) + " is stored and is " +
           (read->front().sha256 == sent.sha256
                ? "the one this append sent (same sha256)"
                : "a different one (sha256 " + read->front().sha256 + ")");
  }
  const std::string stream = store->JournalStream(), subject = store->JournalSubject(kAgent);
  auto last = store->api()->GetLast(stream, subject);
  if (!last.ok() || !last->has_value()) return out + "; no last journal message";
  out += "; the subject's last messages:";
  const uint64_t from = (*last)->seq > 4 ? (*last)->seq - 4 : 1;
  for (uint64_t at = from; at <= (*last)->seq;) {
    auto m = store->api()->GetNext(stream, at, subject);
    if (!m.ok() || !m->has_value()) break;
    const JsMessage& msg = **m;
    out += " [seq " + std::to_string(msg.seq) + " kind " + msg.Header("Agentckpt-Kind") +
           " entries " + msg.Header("Agentckpt-First") + ".." + msg.Header("Agentckpt-Last") +
           " epoch " + msg.Header("Agentckpt-Epoch") + " msg-id " + msg.Header("Nats-Msg-Id") + "]";
    at = msg.seq + 1;
  }
  return out;
}

// The same for a put: what the agent record lists at `sequence`.
std::string DescribeCheckpointAt(JetStreamStore* store, const SealedCheckpoint& sent) {
  std::string out;
  StatusOr<AgentRecord> agent = store->GetAgent(kAgent);
  if (agent.ok()) out += "; the record's last sequence is " + std::to_string(agent->last_sequence);
  StatusOr<Checkpoint> there = store->GetBySequence(kAgent, sent.doc.sequence_number);
  if (!there.ok()) return out + "; at that sequence: " + there.status().ToString();
  return out + std::string("; the checkpoint stored at that sequence is ") +
         (there->content_sha256 == sent.doc.content_sha256 ? "the one this put sent"
                                                           : "a different one");
}

// The writer thread's loop (see the file comment). Returns when `stop` is set or on an error
// that is not kUnavailable (recorded in log->fatal).
void RunWriter(JetStreamStore* store, const LeaseToken& token, const std::atomic<bool>* stop,
               WriteLog* log) {
  int64_t next_entry = 1;
  std::string prev = kJournalGenesisSha256;
  std::optional<JournalEntry> last_entry;  // the newest entry known to be stored
  int64_t next_checkpoint = 1;
  int64_t compact_through = 0;  // journal sequence of the newest checkpoint known stored
  int appended_since_put = 0;
  bool resync_journal = true;  // read the journal head from the store before the next append
  while (!stop->load()) {
    if (resync_journal) {
      // The failed append may or may not have landed: the store says where the journal is.
      StatusOr<JournalStats> stats = store->GetJournalStats(kAgent);
      StatusOr<std::vector<JournalEntry>> tail =
          stats.ok() ? store->ReadJournal(kAgent, std::max<int64_t>(0, stats->last_sequence - 1))
                     : StatusOr<std::vector<JournalEntry>>(stats.status());
      if (!tail.ok()) {
        if (tail.status().code() != StatusCode::kUnavailable) {
          return log->Fatal("re-reading the journal head", tail.status());
        }
        {
          std::lock_guard<std::mutex> lock(log->mu);
          ++log->failed_resyncs;
          log->NoteUnavailable("re-reading the journal head", tail.status());
        }
        SleepMs(100);
        continue;  // each attempt is bounded by kRetryMs; `stop` ends the loop
      }
      next_entry = stats->last_sequence + 1;
      if (tail->empty()) {
        if (stats->last_sequence != 0) {
          return log->Fatal(
              "re-reading the journal head",
              DataLossError("journal high-water mark " + std::to_string(stats->last_sequence) +
                            " but its last entry does not read back"));
        }
        prev = kJournalGenesisSha256;
        last_entry.reset();
      } else {
        if (tail->back().sequence != stats->last_sequence) {
          return log->Fatal(
              "re-reading the journal head",
              DataLossError("the last entry read back is " + std::to_string(tail->back().sequence) +
                            ", the high-water mark " + std::to_string(stats->last_sequence)));
        }
        prev = tail->back().sha256;
        last_entry = tail->back();
      }
      resync_journal = false;
    }

    std::vector<JournalEntry> one = JournalChain(kAgent, next_entry, 1, token.epoch, prev);
    const Clock::time_point append_start = Clock::now();
    Status appended = store->AppendJournal(kAgent, one, token);
    log->Timed("append " + std::to_string(next_entry), append_start);
    if (!appended.ok()) {
      if (appended.code() != StatusCode::kUnavailable) {
        return log->Fatal(
            "append of entry " + std::to_string(next_entry) + " (returned after " +
                std::to_string(MsSince(append_start)) + " ms)",
            Status(appended.code(), appended.message() + DescribeJournalAt(store, one.front())));
      }
      std::lock_guard<std::mutex> lock(log->mu);
      ++log->failed_appends;
      log->NoteUnavailable("append of entry " + std::to_string(next_entry), appended);
      resync_journal = true;
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(log->mu);
      log->entries[one.front().sequence] = one.front().sha256;
    }
    prev = one.front().sha256;
    last_entry = one.front();
    ++next_entry;
    SleepMs(kWritePauseMs);

    if (++appended_since_put < 3 || stop->load()) continue;
    appended_since_put = 0;
    PutOptions opts{kKeep};
    opts.lease = token;
    opts.journal_compact_through = compact_through;  // the previous checkpoint's position
    const int64_t sequence = next_checkpoint;
    const Clock::time_point put_start = Clock::now();
    const SealedCheckpoint sealed = SealForTest(DocAt(sequence, *last_entry));
    StatusOr<PutResult> put = store->Put(sealed, opts);
    log->Timed("put " + std::to_string(sequence), put_start);
    if (put.ok()) {
      {
        std::lock_guard<std::mutex> lock(log->mu);
        log->checkpoints.push_back(sequence);
      }
      compact_through = last_entry->sequence;
      next_checkpoint = sequence + 1;
    } else {
      if (put.status().code() != StatusCode::kUnavailable) {
        return log->Fatal("put of checkpoint " + std::to_string(sequence) + " (returned after " +
                              std::to_string(MsSince(put_start)) + " ms)",
                          Status(put.status().code(),
                                 put.status().message() + DescribeCheckpointAt(store, sealed)));
      }
      {
        std::lock_guard<std::mutex> lock(log->mu);
        ++log->failed_puts;
        log->NoteUnavailable("put of checkpoint " + std::to_string(sequence), put.status());
      }
      // The put may or may not have landed: go on after whatever the record holds, and never
      // reuse the sequence of the failed put.
      next_checkpoint = sequence + 1;
      StatusOr<AgentRecord> agent = store->GetAgent(kAgent);
      if (agent.ok()) {
        next_checkpoint = std::max(next_checkpoint, agent->last_sequence + 1);
        if (agent->last_sequence == sequence) compact_through = last_entry->sequence;  // landed
      } else if (agent.status().code() != StatusCode::kUnavailable) {
        return log->Fatal("reading the agent record after a failed put", agent.status());
      } else {
        std::lock_guard<std::mutex> lock(log->mu);
        ++log->failed_resyncs;
      }
    }
    SleepMs(kWritePauseMs);
  }
}

// Every checkpoint the agent record lists reads back through a new handle (one pruned by the
// running writer meanwhile reads as kNotFound; a listed document that is gone is kDataLoss).
// Once the writer has stopped (`writer_done`), the newest acknowledged checkpoints must be among
// them too: kKeep of them, less one for each failed put (a put that failed may still have been
// stored, and then it counts among the kept).
void CheckRetained(const std::string& servers, WriteLog* log, bool writer_done) {
  auto store = OpenStore(servers);
  ASSERT_TRUE(store.ok()) << "opening a new handle: " << store.status().ToString();
  auto listed = (*store)->List(kAgent, 1000000);
  STORE_ASSERT_OK(listed);
  for (const CheckpointInfo& info : *listed) {
    auto cp = (*store)->GetBySequence(kAgent, info.sequence_number);
    ASSERT_TRUE(cp.ok() || (!writer_done && cp.status().code() == StatusCode::kNotFound))
        << "listed checkpoint " << info.sequence_number << ": " << cp.status().ToString();
  }
  if (!writer_done) return;
  std::vector<int64_t> acked;
  int failed_puts = 0;
  {
    std::lock_guard<std::mutex> lock(log->mu);
    acked = log->checkpoints;
    failed_puts = log->failed_puts;
  }
  const size_t sure = static_cast<size_t>(std::max(0, kKeep - failed_puts));
  for (size_t i = acked.size() > sure ? acked.size() - sure : 0; i < acked.size(); ++i) {
    auto cp = (*store)->GetBySequence(kAgent, acked[i]);
    ASSERT_TRUE(cp.ok()) << "retained checkpoint " << acked[i] << ": " << cp.status().ToString();
    ASSERT_EQ(cp->checkpoint_id, CheckpointIdAt(acked[i]));
  }
}

// Stops and joins the writer thread when the test returns (also on a failed ASSERT).
struct WriterGuard {
  std::atomic<bool>* stop;
  std::thread* thread;
  ~WriterGuard() {
    stop->store(true);
    if (thread->joinable()) thread->join();
  }
};

// A recovering sidecar's reads through a new handle: GetLatestVerified + ReadJournal. Sets
// *read_ms to their time and *open_ms to the time of the Open before them; checks that what was
// acknowledged before the reads is there.
void RecoveryRead(const std::string& servers, WriteLog* log, int64_t* read_ms, int64_t* open_ms) {
  const Clock::time_point open_start = Clock::now();
  auto store = OpenStore(servers);
  *open_ms = MsSince(open_start);
  ASSERT_TRUE(store.ok()) << "opening a new handle: " << store.status().ToString();
  const int64_t acked_checkpoint = log->LastCheckpoint();
  const int64_t acked_entry = log->LastEntry();
  const Clock::time_point start = Clock::now();
  StatusOr<LatestVerified> latest = (*store)->GetLatestVerified(kAgent);
  StatusOr<std::vector<JournalEntry>> journal = (*store)->ReadJournal(kAgent, 0);
  *read_ms = MsSince(start);
  if (!latest.ok() && !(acked_checkpoint == 0 && latest.status().code() == StatusCode::kNotFound)) {
    STORE_ASSERT_OK(latest);  // kNotFound only before the first acknowledged checkpoint
  }
  if (latest.ok()) {
    EXPECT_TRUE(latest->skipped.empty());
    ASSERT_GE(latest->checkpoint.sequence_number, acked_checkpoint)
        << "the newest acknowledged checkpoint is not the latest verified one";
  }
  STORE_ASSERT_OK(journal);
  if (acked_entry > 0) {
    ASSERT_FALSE(journal->empty()) << "acknowledged entry " << acked_entry << " is missing";
    ASSERT_GE(journal->back().sequence, acked_entry)
        << "acknowledged entry " << acked_entry << " is missing";
  }
  // ReadJournal is no snapshot: it walks the messages one by one while the writer goes on, and
  // a put that commits meanwhile purges the entries at or below its compaction mark (the journal
  // position of the checkpoint before it), so some low entries can be missing from the middle of
  // what was read. Every such mark is below the journal position of the newest checkpoint read
  // afterwards: a gap above that position is a lost entry.
  StatusOr<LatestVerified> after = (*store)->GetLatestVerified(kAgent);
  const int64_t may_miss_through =
      after.ok() && after->checkpoint.journal ? after->checkpoint.journal->sequence : 0;
  for (size_t i = 1; i < journal->size(); ++i) {
    const int64_t at = (*journal)[i].sequence, before = (*journal)[i - 1].sequence;
    ASSERT_GT(at, before) << "the journal is not ascending";
    if (at != before + 1) {
      ASSERT_LE(at - 1, may_miss_through)
          << "a gap in the journal: " << before << " then " << at
          << ", above the newest checkpoint's journal position " << may_miss_through;
    }
  }
}

int64_t Percentile(std::vector<int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(p * static_cast<double>(v.size()) + 0.999999);
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

TEST(JetStreamClusterChaosTest, NodeKillsLoseNoAcknowledgedWrite) {
  const uint64_t seed = ChaosSeed();
  std::printf("chaos schedule seed %llu (set AGENTCKPT_CRASH_SEED to replay)\n",
              static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Clock::time_point test_start = Clock::now();

  NatsClusterProcess cluster;
  auto store = OpenStore(cluster.url());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::vector<std::string> streams = {(*store)->AgentsStream(), (*store)->CheckpointsStream(),
                                            (*store)->JournalStream()};
  for (const std::string& stream : streams) {
    STORE_ASSERT_OK(cluster.WaitForStreamHealthy(stream, 3, kHealthyTimeoutMs));
  }
  auto lease = (*store)->AcquireOrTakeOverLease(kAgent, kHolder, kLeaseTtlMs, kNowMs,
                                                [](const std::string&) { return false; });
  STORE_ASSERT_OK(lease);
  const LeaseToken token{lease->holder, lease->epoch};

  WriteLog log;
  std::atomic<bool> stop{false};
  std::thread writer(RunWriter, store->get(), token, &stop, &log);
  WriterGuard guard{&stop, &writer};

  std::vector<int64_t> down_ms, up_ms;              // GetLatestVerified + ReadJournal
  std::vector<int64_t> down_total_ms, up_total_ms;  // the same with the new handle's Open
  int64_t max_healthy_ms = 0;
  int leader_kills = 0;
  const int rounds = Rounds();
  for (int round = 1; round <= rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    SleepMs(std::uniform_int_distribution<int>(200, 800)(rng));
    // The leader of the agents stream now (bounded: each ask takes at most ~2 s).
    StatusOr<int> leader = UnavailableError("not asked yet");
    for (int attempt = 0; attempt < 10 && !leader.ok(); ++attempt) {
      leader = cluster.StreamLeader((*store)->AgentsStream());
      if (!leader.ok()) SleepMs(200);
    }
    const bool kill_leader = round == 1 || round == 3;
    if (kill_leader) STORE_ASSERT_OK(leader);
    const int victim =
        kill_leader ? *leader : std::uniform_int_distribution<int>(0, cluster.size() - 1)(rng);
    const bool was_leader = leader.ok() && *leader == victim;
    if (was_leader) ++leader_kills;
    cluster.Kill(victim);
    const int64_t killed_at = MsSince(log.created);
    SleepMs(std::uniform_int_distribution<int>(300, 1500)(rng));

    int64_t read_ms = 0, open_ms = 0;
    RecoveryRead(cluster.url(), &log, &read_ms, &open_ms);
    if (HasFatalFailure()) return;
    down_ms.push_back(read_ms);
    down_total_ms.push_back(open_ms + read_ms);
    const int64_t down_read_ms = read_ms, down_open_ms = open_ms;

    cluster.Restart(victim);
    const Clock::time_point healthy_start = Clock::now();
    for (const std::string& stream : streams) {
      STORE_ASSERT_OK(cluster.WaitForStreamHealthy(stream, 3, kHealthyTimeoutMs));
    }
    const int64_t healthy_ms = MsSince(healthy_start);
    max_healthy_ms = std::max(max_healthy_ms, healthy_ms);

    RecoveryRead(cluster.url(), &log, &read_ms, &open_ms);
    if (HasFatalFailure()) return;
    CheckRetained(cluster.url(), &log, /*writer_done=*/false);
    if (HasFatalFailure()) return;
    up_ms.push_back(read_ms);
    up_total_ms.push_back(open_ms + read_ms);
    std::printf(
        "round %d: killed n%d%s at t=%lld ms; recovery read %lld ms (open %lld ms) with it down, "
        "healthy again %lld ms after restart, recovery read %lld ms (open %lld ms) with "
        "all up; %lld entries / %lld checkpoints acknowledged so far\n",
        round, victim + 1, was_leader ? " (the agents stream's leader)" : "",
        static_cast<long long>(killed_at), static_cast<long long>(down_read_ms),
        static_cast<long long>(down_open_ms), static_cast<long long>(healthy_ms),
        static_cast<long long>(read_ms), static_cast<long long>(open_ms),
        static_cast<long long>(log.LastEntry()), static_cast<long long>(log.LastCheckpoint()));
    std::fflush(stdout);
    {
      std::lock_guard<std::mutex> lock(log.mu);
      ASSERT_TRUE(log.fatal.empty()) << "the writer stopped: " << log.fatal;
    }
  }

  stop.store(true);
  writer.join();
  ASSERT_TRUE(log.fatal.empty()) << "the writer stopped: " << log.fatal;
  // From here on the log is the writer's final word (the thread has ended).

  CheckRetained(cluster.url(), &log, /*writer_done=*/true);
  if (HasFatalFailure()) return;
  auto check = OpenStore(cluster.url());
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  auto latest = (*check)->GetLatestVerified(kAgent);
  STORE_ASSERT_OK(latest);
  EXPECT_TRUE(latest->skipped.empty()) << latest->skipped.front().reason;
  ASSERT_FALSE(log.checkpoints.empty());
  // A put that failed (kUnavailable) may have been stored all the same: at or above.
  ASSERT_GE(latest->checkpoint.sequence_number, log.checkpoints.back());
  ASSERT_TRUE(latest->checkpoint.journal.has_value());
  // Entries at or below the newest checkpoint's compaction mark may be gone. That mark is the
  // journal position of the checkpoint before it, so below the newest one's: take that.
  const int64_t mark = latest->checkpoint.journal->sequence;

  auto journal = (*check)->ReadJournal(kAgent, 0);
  STORE_ASSERT_OK(journal);
  ASSERT_FALSE(journal->empty());
  for (size_t i = 0; i < journal->size(); ++i) {
    const JournalEntry& e = (*journal)[i];
    STORE_ASSERT_OK(VerifyJournalEntry(e));
    if (i > 0) {
      ASSERT_EQ(e.sequence, (*journal)[i - 1].sequence + 1) << "a gap in the journal";
      ASSERT_EQ(e.prev_sha256, (*journal)[i - 1].sha256)
          << "entry " << e.sequence << " does not chain to the one before";
    }
  }
  // The newest checkpoint's journal position is still there (only the one before was
  // compacted), so a restore can fold the entries after it.
  const int64_t first = journal->front().sequence;
  ASSERT_LE(first, mark) << "the newest checkpoint's journal position was compacted away";
  ASSERT_GE(journal->back().sequence, mark);
  EXPECT_EQ((*journal)[static_cast<size_t>(mark - first)].sha256,
            latest->checkpoint.journal->sha256)
      << "the entry at the newest checkpoint's journal position is not the one it names";
  for (const auto& [s, sha] : log.entries) {
    const bool present = s >= first && s <= journal->back().sequence;
    if (s > mark) {
      ASSERT_TRUE(present) << "acknowledged entry " << s << " is missing (journal holds " << first
                           << ".." << journal->back().sequence << ", mark " << mark << ")";
    }
    if (present) {
      ASSERT_EQ((*journal)[static_cast<size_t>(s - first)].sha256, sha)
          << "acknowledged entry " << s << " was replaced";
    }
  }
  EXPECT_GE(static_cast<int>(log.entries.size()), kMinAckedEntries);
  EXPECT_GE(static_cast<int>(log.checkpoints.size()), kMinAckedCheckpoints);

  for (const std::string& stall : log.stalls) std::printf("slow write: %s\n", stall.c_str());
  for (const std::string& u : log.unavailable) std::printf("unavailable: %s\n", u.c_str());
  auto p50 = [](const std::vector<int64_t>& v) {
    return static_cast<long long>(Percentile(v, 0.5));
  };
  auto max = [](const std::vector<int64_t>& v) {
    return static_cast<long long>(Percentile(v, 1.0));
  };
  std::printf(
      "chaos summary: seed %llu, %d rounds, %d kills (%d of the agents stream's leader), "
      "%zu journal entries and %zu checkpoints acknowledged (the kept ones read back), %d failed "
      "(Unavailable) writes (%d appends, %d puts), slowest write %lld ms; recovery read p50/max: "
      "one node down "
      "%lld/%lld ms (%lld/%lld ms with the new handle's open), all up %lld/%lld ms "
      "(%lld/%lld ms with open); streams healthy after restart within %lld ms; %lld ms "
      "in all\n",
      static_cast<unsigned long long>(seed), rounds, rounds, leader_kills, log.entries.size(),
      log.checkpoints.size(), log.failed_appends + log.failed_puts, log.failed_appends,
      log.failed_puts, static_cast<long long>(log.slowest_write_ms), p50(down_ms), max(down_ms),
      p50(down_total_ms), max(down_total_ms), p50(up_ms), max(up_ms), p50(up_total_ms),
      max(up_total_ms), static_cast<long long>(max_healthy_ms),
      static_cast<long long>(MsSince(test_start)));
  std::fflush(stdout);
}

}  // namespace
}  // namespace agentckpt::testing
