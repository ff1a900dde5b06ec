#include "console/fleet_cache.h"

#include <functional>
#include <unordered_set>
#include <utility>

#include "common/status_macros.h"
#include "common/time_format.h"
#include "console/console_views.h"

namespace agentckpt {

using nlohmann::json;

FleetCache::FleetCache(CheckpointStore* store, int64_t max_age_ms)
    : store_(store), max_age_ms_(max_age_ms) {}

StatusOr<json> FleetCache::View(int64_t now_ms) {
  ASSIGN_OR_RETURN(std::vector<std::string> agents, store_->ListAgents());
  json rows = json::array();
  int computed = 0, reused = 0;
  for (const std::string& agent : agents) {
    auto rec = store_->GetAgent(agent);
    if (!rec.ok()) {
      rows.push_back({{"agentId", agent}, {"error", rec.status().ToString()}});
      continue;
    }
    rec->agent_id = agent;
    Key key{rec->last_sequence, rec->lease_epoch};
    bool keyed = max_age_ms_ > 0;
    if (keyed && store_->SupportsJournal()) {
      auto stats = store_->GetJournalStats(agent);
      if (stats.ok()) {
        key.journal_entries = stats->entries;
        key.journal_first = stats->first_sequence;
        key.journal_last = stats->last_sequence;
        key.journal_bytes = stats->bytes;
      } else {
        keyed = false;  // the journal's size is unknown: compute the row
      }
    }
    if (keyed) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = rows_.find(agent);
      if (it != rows_.end() && it->second.key == key && now_ms < it->second.expires_at_ms) {
        json row = it->second.row;
        SetFleetRecordFields(*rec, &row);
        if (row["lastCheckpoint"].is_object()) {
          row["lastCheckpoint"]["ageMs"] = now_ms - it->second.checkpoint_timestamp_ms;
        }
        rows.push_back(std::move(row));
        ++reused;
        continue;
      }
    }
    json row = FleetRow(store_, *rec, now_ms);
    ++computed;
    if (keyed && !row.contains("error")) {
      Row kept{key, row, 0, 0};
      if (row["lastCheckpoint"].is_object()) {
        kept.checkpoint_timestamp_ms = now_ms - row["lastCheckpoint"]["ageMs"].get<int64_t>();
      }
      const int64_t half = max_age_ms_ / 2;
      kept.expires_at_ms =
          now_ms + half + static_cast<int64_t>(std::hash<std::string>{}(agent) %
                                               static_cast<size_t>(max_age_ms_ - half + 1));
      std::lock_guard<std::mutex> lock(mu_);
      rows_[agent] = std::move(kept);
    }
    rows.push_back(std::move(row));
  }
  {
    // Forget the rows of agents no longer in the store.
    std::unordered_set<std::string> listed(agents.begin(), agents.end());
    std::lock_guard<std::mutex> lock(mu_);
    std::erase_if(rows_, [&](const auto& kv) { return !listed.contains(kv.first); });
  }
  return json{{"generatedAt", FormatRfc3339Millis(now_ms)},
              {"agents", std::move(rows)},
              {"rowsComputed", computed},
              {"rowsReused", reused}};
}

}  // namespace agentckpt
