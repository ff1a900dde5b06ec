// Crash safety of the JetStream store: a writer process takes the agent's lease (taking it over
// from its killed predecessor), appends journal entries and puts checkpoints that compact the
// journal, and confirms each on a pipe only after the store returned OK; it is SIGKILLed at
// random moments. After every kill a new handle must read back every confirmed checkpoint and
// every confirmed journal entry above the compaction mark, verified, with no gap.
//
// The writer is this test binary run again (a DISABLED_ test selected by --gtest_filter), so it
// starts with a fresh nats.c: a forked child of a process whose nats.c threads run would not.
// The schedule is seeded (AGENTCKPT_CRASH_SEED overrides it) and the seed is printed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/canonical.h"
#include "store/jetstream/jetstream_store.h"
#include "tests/store/crash_pipe.h"
#include "tests/store/store_test_util.h"
#include "tests/support/nats_server.h"

namespace agentckpt::testing {
namespace {

constexpr char kAgent[] = "agent-js-crash";
constexpr char kPrefix[] = "CRASH";
constexpr int kKills = 40;
constexpr int kKeep = 1000000;  // nothing confirmed is ever pruned
constexpr int kConfirmTimeoutMs = 30000;

struct Confirmation {
  int64_t kind;  // 0: checkpoint sequence, 1: journal entry sequence
  int64_t sequence;
};

StatusOr<std::unique_ptr<JetStreamStore>> OpenAt(const std::string& servers) {
  JetStreamStoreOptions o;
  o.api.servers = servers;
  o.prefix = kPrefix;
  o.create = true;
  return JetStreamStore::Open(std::move(o));
}

Checkpoint DocAt(int64_t sequence, const JournalEntry* through) {
  Checkpoint cp = MakeCheckpoint(kAgent, sequence);
  cp.checkpoint_id = TestUuid(0x15c7a5, static_cast<uint64_t>(sequence));
  if (through != nullptr) cp.journal = JournalPosition{through->sequence, through->sha256};
  return cp;
}

[[noreturn]] void Fail(const char* what, const Status& s) {
  std::fprintf(stderr, "writer: %s: %s\n", what, s.ToString().c_str());
  std::fflush(stderr);
  _exit(3);
}

// The writer (run by the parent test through exec): never returns.
TEST(JetStreamCrashWriter, DISABLED_Run) {
  const char* servers = std::getenv("JS_CRASH_SERVERS");
  const char* fd_text = std::getenv("JS_CRASH_FD");
  if (servers == nullptr || fd_text == nullptr) GTEST_SKIP() << "run by JetStreamCrashTest only";
  const int fd = std::atoi(fd_text);
  auto store = OpenAt(servers);
  if (!store.ok()) Fail("open", store.status());
  auto lease = (*store)->AcquireOrTakeOverLease(kAgent, "writer-" + std::to_string(getpid()),
                                                60000, 1'700'000'000'000,
                                                [](const std::string&) { return true; });
  if (!lease.ok()) Fail("lease", lease.status());
  const LeaseToken token{lease->holder, lease->epoch};
  auto agent = (*store)->GetAgent(kAgent);
  if (!agent.ok()) Fail("agent", agent.status());
  auto stats = (*store)->GetJournalStats(kAgent);
  if (!stats.ok()) Fail("journal stats", stats.status());
  auto tail = (*store)->ReadJournal(kAgent, 0);
  if (!tail.ok()) Fail("journal", tail.status());
  std::string prev = tail->empty() ? kJournalGenesisSha256 : tail->back().sha256;
  int64_t next_entry = stats->last_sequence + 1;
  JournalEntry last_entry;
  for (int64_t checkpoint = agent->last_sequence + 1;;) {
    for (int i = 0; i < 3; ++i) {
      std::vector<JournalEntry> one = JournalChain(kAgent, next_entry, 1, token.epoch, prev);
      Status s = (*store)->AppendJournal(kAgent, one, token);
      if (!s.ok()) Fail("append", s);
      last_entry = one.front();
      prev = last_entry.sha256;
      Confirmation c{1, next_entry++};
      if (write(fd, &c, sizeof(c)) != static_cast<ssize_t>(sizeof(c))) _exit(6);
    }
    PutOptions opts{kKeep};
    opts.lease = token;
    opts.journal_compact_through = last_entry.sequence - 1;  // keeps the newest entry
    auto put = (*store)->Put(SealForTest(DocAt(checkpoint, &last_entry)), opts);
    if (!put.ok()) Fail("put", put.status());
    Confirmation c{0, checkpoint++};
    if (write(fd, &c, sizeof(c)) != static_cast<ssize_t>(sizeof(c))) _exit(6);
  }
}

uint64_t CrashSeed() {
  const char* s = std::getenv("AGENTCKPT_CRASH_SEED");
  return s && *s ? std::strtoull(s, nullptr, 10) : 20261125;
}

pid_t StartWriter(const std::string& servers, int fd) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  setenv("JS_CRASH_SERVERS", servers.c_str(), 1);
  setenv("JS_CRASH_FD", std::to_string(fd).c_str(), 1);
  const char* argv[] = {"/proc/self/exe", "--gtest_filter=JetStreamCrashWriter.DISABLED_Run",
                        "--gtest_also_run_disabled_tests", nullptr};
  execv(argv[0], const_cast<char* const*>(argv));
  _exit(7);
}

TEST(JetStreamCrashTest, ConfirmedPutsAndJournalEntriesSurviveSigkillOfTheWriter) {
  const uint64_t seed = CrashSeed();
  std::printf("crash schedule seed %llu (set AGENTCKPT_CRASH_SEED to replay)\n",
              static_cast<unsigned long long>(seed));
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  NatsServerProcess server;
  std::vector<int64_t> checkpoints, entries;
  int kills_after_an_unconfirmed_write = 0;
  for (int kill_no = 1; kill_no <= kKills; ++kill_no) {
    SCOPED_TRACE("kill " + std::to_string(kill_no));
    const size_t wait_for = std::uniform_int_distribution<size_t>(1, 8)(rng);
    const int delay_us = std::uniform_int_distribution<int>(0, 3000)(rng);
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = StartWriter(server.url(), fds[1]);
    ASSERT_GT(pid, 0) << "fork failed";
    close(fds[1]);
    std::vector<Confirmation> now;
    bool in_time = ReadPipeRecords(fds[0], wait_for, kConfirmTimeoutMs, &now);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));  // a random kill moment
    kill(pid, SIGKILL);
    int wstatus = 0;
    ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
    bool drained = ReadPipeRecords(fds[0], SIZE_MAX, kConfirmTimeoutMs, &now);
    close(fds[0]);
    ASSERT_TRUE(in_time) << "the writer confirmed " << now.size() << " of " << wait_for
                         << " writes within " << kConfirmTimeoutMs << " ms";
    ASSERT_TRUE(drained);
    ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)
        << "the writer ended on its own (exit status " << WEXITSTATUS(wstatus) << ")";
    for (const Confirmation& c : now) (c.kind == 0 ? checkpoints : entries).push_back(c.sequence);

    auto store = OpenAt(server.url());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (int64_t s : checkpoints) {
      auto cp = (*store)->GetBySequence(kAgent, s);
      ASSERT_TRUE(cp.ok()) << "confirmed checkpoint " << s << ": " << cp.status().ToString();
      ASSERT_EQ(cp->checkpoint_id, DocAt(s, nullptr).checkpoint_id);
    }
    auto latest = (*store)->GetLatestVerified(kAgent);
    int64_t mark = 0;  // no entry above what the newest checkpoint compacted may be missing
    if (!checkpoints.empty()) STORE_ASSERT_OK(latest);
    if (latest.ok()) {  // a put may be stored although its writer died before confirming it
      EXPECT_TRUE(latest->skipped.empty());
      ASSERT_TRUE(latest->checkpoint.journal.has_value());
      mark = latest->checkpoint.journal->sequence - 1;
      const int64_t confirmed = checkpoints.empty() ? 0 : checkpoints.back();
      ASSERT_GE(latest->checkpoint.sequence_number, confirmed);
      if (latest->checkpoint.sequence_number > confirmed) ++kills_after_an_unconfirmed_write;
    }
    auto journal = (*store)->ReadJournal(kAgent, 0);
    STORE_ASSERT_OK(journal);
    for (size_t i = 0; i < journal->size(); ++i) {
      const JournalEntry& e = (*journal)[i];
      STORE_ASSERT_OK(VerifyJournalEntry(e));
      if (i > 0) {
        ASSERT_EQ(e.sequence, (*journal)[i - 1].sequence + 1) << "a gap in the journal";
      }
    }
    for (int64_t s : entries) {
      if (s <= mark) continue;
      ASSERT_FALSE(journal->empty()) << "confirmed entry " << s << " is missing";
      ASSERT_LE(journal->front().sequence, s) << "confirmed entry " << s << " is missing";
      ASSERT_GE(journal->back().sequence, s) << "confirmed entry " << s << " is missing";
    }
    if (!entries.empty() && (journal->empty() || journal->back().sequence > entries.back())) {
      ++kills_after_an_unconfirmed_write;
    }
  }
  std::printf("%d kills: %zu confirmed checkpoints and %zu confirmed journal entries all read "
              "back; %d kills left a write stored but unconfirmed\n",
              kKills, checkpoints.size(), entries.size(), kills_after_an_unconfirmed_write);
}

}  // namespace
}  // namespace agentckpt::testing
