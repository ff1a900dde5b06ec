// Crash safety of the SQLite store: a writer process puts checkpoints in a loop and confirms each
// one on a pipe only after Put returned OK; it is SIGKILLed at random moments (in the middle of a
// put, of opening, of pruning, ...). After every kill the store must open cleanly, pass SQLite's
// integrity check, and every confirmed checkpoint must read back and verify.
//
// The random schedule is seeded (AGENTCKPT_CRASH_SEED overrides the default) and the seed is
// printed, so a failure can be replayed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "store/sqlite/sqlite_schema.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/store/crash_pipe.h"
#include "tests/store/store_test_util.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

constexpr char kAgent[] = "agent-crash";
constexpr int kKills = 60;
constexpr int kKeep = 1000000;  // nothing confirmed is ever pruned
constexpr int kConfirmTimeoutMs = 20000;

// The checkpoint the writer puts at `sequence`: the 16 KB reference document, renumbered.
Checkpoint DocAt(const Checkpoint& base, int64_t sequence) {
  Checkpoint cp = base;
  cp.agent_id = kAgent;
  cp.sequence_number = sequence;
  cp.checkpoint_id = TestUuid(0xc7a5, static_cast<uint64_t>(sequence));
  cp.timestamp_ms = base.timestamp_ms + sequence * 1000;
  return cp;
}

// The writers open the store as the sidecar does: the WAL grown to its steady size at open, so
// kills also land while it grows. The checks after each kill open it as the CLI does.
SqliteStoreOptions SidecarOptions() {
  SqliteStoreOptions options;
  options.presize_wal = true;
  return options;
}

// The child: opens the store, continues after the highest sequence ever written, and confirms
// each put on `fd` after it returned OK. Never returns; exits only on an error (the parent
// expects it to die by SIGKILL).
[[noreturn]] void RunWriter(const std::string& path, const Checkpoint& base, int fd) {
  auto store = SqliteStore::Open(path, SidecarOptions());
  if (!store.ok()) {
    std::fprintf(stderr, "writer: open: %s\n", store.status().ToString().c_str());
    _exit(3);
  }
  auto agent = (*store)->GetAgent(kAgent);
  if (!agent.ok()) {
    std::fprintf(stderr, "writer: agent: %s\n", agent.status().ToString().c_str());
    _exit(3);
  }
  for (int64_t sequence = agent->last_sequence + 1;; ++sequence) {
    auto sealed = Seal(DocAt(base, sequence));
    if (!sealed.ok()) _exit(4);
    auto put = (*store)->Put(*sealed, PutOptions{kKeep});
    if (!put.ok()) {
      std::fprintf(stderr, "writer: put %lld: %s\n", static_cast<long long>(sequence),
                   put.status().ToString().c_str());
      _exit(5);
    }
    if (write(fd, &sequence, sizeof(sequence)) != static_cast<ssize_t>(sizeof(sequence))) {
      _exit(6);
    }
  }
}

bool ReadConfirmations(int fd, size_t want, int timeout_ms, std::vector<int64_t>* out) {
  return ReadPipeRecords(fd, want, timeout_ms, out);
}

uint64_t CrashSeed() {
  const char* s = std::getenv("AGENTCKPT_CRASH_SEED");
  return s && *s ? std::strtoull(s, nullptr, 10) : 20261122;
}

TEST(SqliteCrashTest, ConfirmedPutsSurviveSigkillAtRandomMoments) {
  const uint64_t seed = CrashSeed();
  std::printf("crash schedule seed %llu (set AGENTCKPT_CRASH_SEED to replay)\n",
              static_cast<unsigned long long>(seed));
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  TempDir dir;
  const std::string path = dir.File("store/checkpoints.db");
  Checkpoint base = LoadFixtureCheckpoint("checkpoint-16k.json");

  std::map<int64_t, std::string> expected_sha;  // by sequence, filled lazily
  auto sha_of = [&](int64_t sequence) -> const std::string& {
    auto it = expected_sha.find(sequence);
    if (it == expected_sha.end()) {
      it = expected_sha.emplace(sequence, SealForTest(DocAt(base, sequence)).doc.content_sha256)
               .first;
    }
    return it->second;
  };

  std::vector<int64_t> confirmed;
  int kills_before_any_confirmation = 0;
  int kills_between_commit_and_confirmation = 0;
  for (int kill_no = 1; kill_no <= kKills; ++kill_no) {
    SCOPED_TRACE("kill " + std::to_string(kill_no));
    const size_t wait_for = std::uniform_int_distribution<size_t>(0, 5)(rng);
    const int delay_us = std::uniform_int_distribution<int>(0, 3000)(rng);

    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      close(fds[0]);
      RunWriter(path, base, fds[1]);
    }
    close(fds[1]);
    std::vector<int64_t> now;
    bool in_time = ReadConfirmations(fds[0], wait_for, kConfirmTimeoutMs, &now);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));  // a random kill moment
    kill(pid, SIGKILL);
    int wstatus = 0;
    ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
    // Whatever the writer confirmed before it died counts too.
    bool drained = ReadConfirmations(fds[0], SIZE_MAX, kConfirmTimeoutMs, &now);
    close(fds[0]);
    ASSERT_TRUE(in_time) << "the writer confirmed " << now.size() << " of " << wait_for
                         << " puts within " << kConfirmTimeoutMs << " ms";
    ASSERT_TRUE(drained);
    ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)
        << "the writer ended on its own (exit status " << WEXITSTATUS(wstatus) << ")";
    if (now.empty()) ++kills_before_any_confirmation;
    for (int64_t s : now) {
      if (!confirmed.empty()) {
        ASSERT_GT(s, confirmed.back());
      }
      confirmed.push_back(s);
    }

    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << "the store does not open after the kill: "
                            << store.status().ToString();
    STORE_ASSERT_OK((*store)->CheckIntegrity());
    for (int64_t s : confirmed) {
      auto cp = (*store)->GetBySequence(kAgent, s);
      ASSERT_TRUE(cp.ok()) << "confirmed sequence " << s << ": " << cp.status().ToString();
      ASSERT_EQ(cp->checkpoint_id, DocAt(base, s).checkpoint_id);
      ASSERT_EQ(cp->content_sha256, sha_of(s)) << "sequence " << s;
    }
    // Rows written but not confirmed (killed between commit and confirmation) must be whole too.
    auto listed = (*store)->List(kAgent, kKeep);
    STORE_ASSERT_OK(listed);
    for (const CheckpointInfo& info : *listed) {
      STORE_ASSERT_OK((*store)->GetBySequence(kAgent, info.sequence_number));
    }
    if (!confirmed.empty()) {
      auto latest = (*store)->GetLatestVerified(kAgent);
      STORE_ASSERT_OK(latest);
      EXPECT_GE(latest->checkpoint.sequence_number, confirmed.back());
      EXPECT_TRUE(latest->skipped.empty());
      auto agent = (*store)->GetAgent(kAgent);
      STORE_ASSERT_OK(agent);
      EXPECT_EQ(agent->last_sequence, latest->checkpoint.sequence_number);
      if (latest->checkpoint.sequence_number > confirmed.back()) {
        ++kills_between_commit_and_confirmation;
      }
    }
  }
  std::printf(
      "%d kills, %zu confirmed puts all read back; %d kills came before the writer's "
      "first confirmation, %d left a put committed but unconfirmed\n",
      kKills, confirmed.size(), kills_before_any_confirmation,
      kills_between_commit_and_confirmation);
}

// Creates a store at `path` and puts the first checkpoint into it. Returns false on an error.
bool CreateWithOneCheckpoint(const std::string& path, const Checkpoint& base) {
  auto store = SqliteStore::Open(path, SidecarOptions());
  if (!store.ok()) return false;
  auto sealed = Seal(DocAt(base, 1));
  return sealed.ok() && (*store)->Put(*sealed, PutOptions{}).ok();
}

// Kills while a new store file is being created (WAL switch, schema migration, first put): the
// next open must still succeed on a consistent file. The kill moments spread over the time one
// creation takes on this machine, measured first.
TEST(SqliteCrashTest, KillsWhileCreatingTheStoreLeaveAStoreThatOpens) {
  const uint64_t seed = CrashSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed + 1);
  TempDir dir;
  const Checkpoint base = LoadFixtureCheckpoint("checkpoint-16k.json");
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(CreateWithOneCheckpoint(dir.File("calibration.db"), base));
  const auto creation_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  int no_file = 0, empty = 0, with_checkpoint = 0;
  constexpr int kCreationKills = 30;
  for (int kill_no = 1; kill_no <= kCreationKills; ++kill_no) {
    SCOPED_TRACE("kill " + std::to_string(kill_no));
    const std::string path = dir.File("fresh-" + std::to_string(kill_no) + ".db");
    const int64_t delay_us = std::uniform_int_distribution<int64_t>(0, creation_us * 5 / 4)(rng);
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      close(fds[0]);
      const char go = 'g';
      if (write(fds[1], &go, 1) != 1) _exit(6);
      if (!CreateWithOneCheckpoint(path, base)) _exit(3);
      for (;;) pause();  // wait for the SIGKILL
    }
    close(fds[1]);
    pollfd p{fds[0], POLLIN, 0};
    bool started = poll(&p, 1, kConfirmTimeoutMs) == 1;                // the child is about to open
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));  // a random kill moment
    kill(pid, SIGKILL);
    int wstatus = 0;
    ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
    close(fds[0]);
    ASSERT_TRUE(started) << "the child did not start within " << kConfirmTimeoutMs << " ms";
    ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)
        << "the writer ended on its own (exit status " << WEXITSTATUS(wstatus) << ")";

    if (!std::filesystem::exists(path)) ++no_file;
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << "the store does not open after the kill: "
                            << store.status().ToString();
    STORE_ASSERT_OK((*store)->CheckIntegrity());
    auto version = (*store)->SchemaVersion();
    STORE_ASSERT_OK(version);
    int migrations = 0;
    const internal::Migration* all = internal::SqliteMigrations(&migrations);
    EXPECT_EQ(*version, all[migrations - 1].version);  // every migration applied
    auto latest = (*store)->GetLatestVerified(kAgent);
    if (latest.ok()) {
      ++with_checkpoint;
      EXPECT_EQ(latest->checkpoint.sequence_number, 1);
      EXPECT_TRUE(latest->skipped.empty());
    } else {
      ++empty;
      STORE_EXPECT_CODE(latest, kNotFound);
    }
  }
  std::printf(
      "%d kills while creating a store (one creation takes %lld us here): %d before the "
      "file existed, %d left no checkpoint, %d came after the first put\n",
      kCreationKills, static_cast<long long>(creation_us), no_file, empty - no_file,
      with_checkpoint);
}

}  // namespace
}  // namespace agentckpt::testing
