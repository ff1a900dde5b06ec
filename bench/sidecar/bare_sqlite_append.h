// A reference for the journal bench's store-append figure: the least a durable SQLite append can
// cost on this disk. One INSERT of the same ~1 KB entry per transaction into a table of the
// journal's shape (docs/checkpoint-format.md), through the raw sqlite3 API with prepared
// statements, WAL and synchronous=FULL as the store opens its file, and nothing else: no fencing
// read, no agent record, no entry encoding. What SqliteStore::AppendJournal costs beyond it is
// the store's own work; what it costs beyond the fsync floor is SQLite's.
#pragma once

#include <string>

#include "bench/common/percentiles.h"

namespace agentckpt::bench {

// Appends `warmup` + `count` entries of `entry_size` bytes to a new SQLite file at `path` (which
// must not exist) and records the last `count` commit latencies in `out`, each from BEGIN to the
// end of COMMIT. Returns false (and says why on stderr) if SQLite fails.
bool BareSqliteAppend(const std::string& path, int warmup, int count, int entry_size,
                      Latencies* out);

}  // namespace agentckpt::bench
