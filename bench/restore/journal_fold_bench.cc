// CPU cost of the journal half of a restore, phase by phase: decoding a stored entry, verifying
// its SHA-256, applying it to the 16k reference context, folding a 1,000-entry tail, reading that
// tail from SQLite (decoded), and the whole dry-run restore of a checkpoint plus that tail (the
// figure journal_bench prints as [4], here without its wall-clock tail). One thread; the SQLite
// file is in a temp dir, and after the first iteration its pages are in the OS's page cache.
//
//   build/bin/journal_fold_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "bench/common/journal_tail.h"
#include "checkpoint/canonical.h"
#include "common/env.h"
#include "journal/journal_entry.h"
#include "journal/journal_fold.h"
#include "restore/restorer.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

constexpr char kAgent[] = "bench-fold";

const std::vector<JournalEntry>& Tail() {
  static const std::vector<JournalEntry> tail = bench::MakeJournalTail(kAgent, 1000, 1000);
  return tail;
}

Checkpoint FreshCheckpoint() {
  Checkpoint cp = testing::MakeCheckpoint(kAgent, 1);
  cp.timestamp_ms = Env::Default()->NowUnixMillis();  // the fixture's own time is past expiry
  return cp;
}

void BM_DecodeJournalEntry(benchmark::State& bm) {
  const std::string stored = EncodeJournalEntry(Tail()[500]);
  for (auto _ : bm) {
    auto e = DecodeJournalEntry(stored);
    if (!e.ok()) bm.SkipWithError("decode failed");
    benchmark::DoNotOptimize(e);
  }
  bm.SetBytesProcessed(static_cast<int64_t>(bm.iterations() * stored.size()));
}
BENCHMARK(BM_DecodeJournalEntry);

void BM_VerifyJournalEntry(benchmark::State& bm) {
  const JournalEntry& e = Tail()[500];
  for (auto _ : bm) {
    if (!VerifyJournalEntry(e).ok()) bm.SkipWithError("verify failed");
  }
}
BENCHMARK(BM_VerifyJournalEntry);

void BM_FoldJournal1000(benchmark::State& bm) {
  const Checkpoint base = FreshCheckpoint();
  for (auto _ : bm) {
    bm.PauseTiming();
    Checkpoint cp = base;
    bm.ResumeTiming();
    JournalFoldReport r = FoldJournal(Tail(), &cp);
    if (r.applied != 1000) bm.SkipWithError("fold stopped early");
  }
}
BENCHMARK(BM_FoldJournal1000)->Unit(benchmark::kMillisecond);

struct StoredTail {
  testing::TempDir dir;
  std::unique_ptr<SqliteStore> store;
};

StoredTail* Stored() {
  static StoredTail* stored = [] {
    auto* s = new StoredTail();
    auto opened = SqliteStore::Open(s->dir.path() + "/fold.db");
    if (!opened.ok()) std::abort();
    s->store = std::move(opened).value();
    auto sealed = Seal(FreshCheckpoint());
    if (!sealed.ok() || !s->store->Put(*sealed, PutOptions{}).ok()) std::abort();
    if (!s->store->AppendJournal(kAgent, Tail(), std::nullopt).ok()) std::abort();
    return s;
  }();
  return stored;
}

void BM_ReadJournal1000(benchmark::State& bm) {
  SqliteStore* store = Stored()->store.get();
  for (auto _ : bm) {
    auto read = store->ReadJournal(kAgent, 0);
    if (!read.ok() || read->size() != 1000) bm.SkipWithError("read failed");
    benchmark::DoNotOptimize(read);
  }
}
BENCHMARK(BM_ReadJournal1000)->Unit(benchmark::kMillisecond);

void BM_RestoreDryRun1000(benchmark::State& bm) {
  RestoreOptions ro;
  ro.dry_run = true;
  Restorer restorer(Env::Default(), Stored()->store.get(), nullptr, nullptr, ro);
  for (auto _ : bm) {
    auto r = restorer.Run(kAgent);
    if (!r.ok() || r->journal.value("applied", 0) != 1000) bm.SkipWithError("restore failed");
  }
}
BENCHMARK(BM_RestoreDryRun1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace agentckpt

BENCHMARK_MAIN();
