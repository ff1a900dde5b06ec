// FleetCache: the fleet view (console_views.h FleetView) with each agent's row kept between
// requests. A row costs a verified read of the agent's newest checkpoint and a fold of its
// journal; a kept row costs two small reads (the agent record and the journal's size). A kept row
// is used again only while
//   - the agent's last_sequence and lease epoch are those it was computed with (a new checkpoint,
//     a prune, a new writer all change one of them),
//   - the journal's entry count, first and last sequence and byte size are unchanged (a context
//     update, a gate request or decision, a ledger entry, a compaction change one of them), and
//   - it is younger than its expiry, set between max_age/2 and max_age after it was computed
//     (spread by agent id so that rows do not all expire at once). The expiry bounds how long a
//     change no record shows stays unseen: a checkpoint damaged in place, or deleted by its TTL.
// The row's status, updatedAt, lastSequence, leaseEpoch and lastCheckpoint.ageMs always come
// from this request's record and clock. Rows with an "error" are never kept. Thread-safe: two
// concurrent views may both compute a row; the later one is kept.
#pragma once

#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "common/status.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

class FleetCache {
 public:
  // `store` is borrowed and must outlive the cache. `max_age_ms` <= 0 keeps no row (every view
  // computes every row, as FleetView does).
  FleetCache(CheckpointStore* store, int64_t max_age_ms);

  // The fleet document of FleetView, the same for the same store contents, plus
  // "rowsComputed" and "rowsReused" (this request's). Errors as FleetView.
  StatusOr<nlohmann::json> View(int64_t now_ms);

 private:
  struct Key {
    int64_t last_sequence = 0, lease_epoch = 0;
    int64_t journal_entries = 0, journal_first = 0, journal_last = 0, journal_bytes = 0;
    bool operator==(const Key&) const = default;
  };
  struct Row {
    Key key;
    nlohmann::json row;
    int64_t checkpoint_timestamp_ms = 0;  // of row.lastCheckpoint (when not null)
    int64_t expires_at_ms = 0;
  };

  CheckpointStore* store_;
  int64_t max_age_ms_;
  std::mutex mu_;  // guards rows_ (not the computing of a row)
  std::unordered_map<std::string, Row> rows_;
};

}  // namespace agentckpt
