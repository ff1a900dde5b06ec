// The journal append with the WAL checkpointed on the store's own thread (the default) against
// SQLite's automatic checkpoint inside the commit that crosses the limit: the same appends of a
// ~1 KB entry, one per commit, back to back, on a new store file each, in the same directory.
// What moves is the tail: with the automatic checkpoint, one commit in every few thousand copies
// the log's pages into the database file and syncs it before it returns.
//
//   build/bin/wal_checkpoint_bench [appends per side, default 30000] [dir] [rounds, default 2]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "bench/common/percentiles.h"
#include "journal/journal_entry.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::bench {
namespace {

bool Run(const std::string& path, bool background, int appends) {
  SqliteStoreOptions options;
  options.background_wal_checkpoints = background;
  auto opened = SqliteStore::Open(path, options);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    return false;
  }
  auto store = std::move(opened).value();
  const std::string payload =
      "{\"contextSummary\":{\"draftContent\":\"" + std::string(1000, 'd') + "\"}}";
  std::string prev = kJournalGenesisSha256;
  Latencies latencies;
  int over_2ms = 0;
  for (int i = 1; i <= appends; ++i) {
    JournalEntry e;
    e.agent_id = "bench-wal";
    e.sequence = i;
    e.epoch = 1;
    e.payload = payload;
    e.timestamp_ms = 1700000000000 + i;
    e.prev_sha256 = prev;
    SealJournalEntry(&e);
    prev = e.sha256;
    const auto start = std::chrono::steady_clock::now();
    if (Status s = store->AppendJournal("bench-wal", {e}, std::nullopt); !s.ok()) {
      std::fprintf(stderr, "AppendJournal: %s\n", s.ToString().c_str());
      return false;
    }
    const double us = MicrosSince(start);
    latencies.Add(us);
    if (us > 2000) ++over_2ms;
  }
  const std::string name =
      background ? "checkpoints on the store's thread" : "checkpoints in the commit";
  std::printf(
      "%-40s n=%-6zu p50=%8.3f ms  p99=%8.3f ms  p99.9=%8.3f ms  max=%8.3f ms  over 2 ms: %d\n",
      name.c_str(), latencies.count(), latencies.Percentile(50) / 1000,
      latencies.Percentile(99) / 1000, latencies.Percentile(99.9) / 1000,
      latencies.Percentile(100) / 1000, over_2ms);
  if (background) {
    std::printf("%-40s %ld passes on the thread, %ld catch-ups in a commit, %ld failed\n", "",
                static_cast<long>(store->wal_checkpoints()),
                static_cast<long>(store->inline_wal_checkpoints()),
                static_cast<long>(store->failed_wal_checkpoints()));
  }
  return true;
}

}  // namespace
}  // namespace agentckpt::bench

int main(int argc, char** argv) {
  const int appends = argc > 1 ? std::atoi(argv[1]) : 30000;
  agentckpt::testing::TempDir tmp;
  const std::string dir = argc > 2 ? argv[2] : tmp.path();
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 2;
  std::printf(
      "wal_checkpoint_bench: %d appends of a ~1.3 KB entry per side and round, one per commit, "
      "back to back; SQLite (WAL, synchronous=FULL, checkpoint at 4,000 pages), new files in %s\n",
      appends, dir.c_str());
  for (int r = 0; r < rounds; ++r) {
    for (bool background : {r % 2 == 0, r % 2 != 0}) {  // the sides swap who goes first
      const std::string path =
          dir + "/wal-" + std::to_string(r) + (background ? "-bg" : "-inline") + ".db";
      if (!agentckpt::bench::Run(path, background, appends)) return 1;
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
    }
  }
  return 0;
}
