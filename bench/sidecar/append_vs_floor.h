// Figure [2] of journal_bench: the store's journal append alone against the disk's fsync floor,
// and against a bare SQLite append of the same size (the least a durable SQLite append costs on
// the disk: one INSERT per transaction into a table of the journal's shape (rows keyed by slot and
// sequence, schema version 5, so one b-tree page per append), through the raw
// sqlite3 API with prepared statements, WAL and synchronous=FULL as the store opens its file,
// and nothing else: no fencing read, no entry encoding).
//
// The three are measured in alternation, one of each per round in an order shuffled each round,
// so that the disk's state (which moves from minute to minute on a virtual machine) weighs on the
// three alike: first on new files, then once neither WAL file grows any more. The store is opened
// as the sidecar opens it (SqliteStoreOptions::presize_wal: its WAL at the steady size from the
// open on); the bare file is not, so its WAL grows with every commit on a new file, which shows
// what the store avoids.
#pragma once

#include <string>

#include "bench/common/percentiles.h"

namespace agentckpt::bench {

struct AppendFigures {
  Latencies floor_new, store_new, bare_new;  // new files
  Latencies floor, store, bare;              // the WAL files at their steady size
  int growth_appends = 0;                    // appends between the two
  int entry_size = 0;                        // the stored entry's bytes (the bare rows' size)
};

// Measures into `*out`, with files in `dir`: `calls` rounds on new files after 20 untimed, then
// `calls` at the steady size. `payload` is each entry's payload. Returns false, saying why on
// stderr, if a write fails.
bool MeasureAppendVsFloor(const std::string& dir, int calls, const std::string& payload,
                          AppendFigures* out);

// Prints the figures and their ratios at p50.
void PrintAppendFigures(AppendFigures* f);

}  // namespace agentckpt::bench
