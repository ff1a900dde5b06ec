// ChaosRun: what the store holds (audited each cycle and at the end) and the tool-call ledger's
// summary.
#include <cstdlib>
#include <set>

#include "bench/chaos/chaos_run.h"
#include "bench/chaos/chaos_run_internal.h"
#include "examples/reference_agent/sidecar_client.h"
#include "store/checkpoint_store.h"

namespace chaos {

using agentckpt::Status;
using nlohmann::json;

void ChaosRun::AuditStore(CycleRow* row) {
  row->listed_unreadable = -1;
  if (audit_store_ == nullptr) {
    // Every server by name (the harness has no NATS_URL); a short retry: a cycle that ends in a
    // leader election is audited at the next one.
    std::string hosts;
    for (const std::string& url : NatsUrls()) {
      hosts += (hosts.empty() ? "" : ",") + url.substr(url.find("://") + 3);
    }
    auto opened = agentckpt::OpenStore("jetstream://" + hosts + "/" + kStorePrefix +
                                       "?timeout_ms=2000&retry_ms=3000");
    if (!opened.ok()) return;
    audit_store_ = std::move(opened).value();
  }
  auto listed = audit_store_->List(o_.agent_id, 100000);
  if (!listed.ok()) return;
  int unreadable = 0;
  std::vector<std::string> fresh;
  std::string first_error;
  for (const agentckpt::CheckpointInfo& info : *listed) {
    auto cp = audit_store_->GetById(o_.agent_id, info.checkpoint_id);
    if (cp.ok()) continue;
    if (cp.status().code() == agentckpt::StatusCode::kUnavailable) return;  // not audited
    // Pruned since the list was read (GetById reads the record again): no longer listed.
    if (cp.status().code() == agentckpt::StatusCode::kNotFound) continue;
    ++unreadable;
    if (unreadable_ids_.insert(info.checkpoint_id).second) {
      fresh.push_back(std::to_string(info.sequence_number));
      if (first_error.empty()) first_error = cp.status().ToString();
    }
  }
  row->listed_unreadable = unreadable;
  if (!fresh.empty()) {
    std::string seqs;
    for (const std::string& s : fresh) seqs += (seqs.empty() ? "" : " ") + s;
    AddNote(row, std::to_string(fresh.size()) +
                     " checkpoints the agent record lists cannot be "
                     "read back any more (sequences " +
                     seqs + "; of " + std::to_string(listed->size()) + " listed): " + first_error);
  }
}

Status ChaosRun::FinalStoreCheck(json* out) {
  if (o_.store == "firestore") {
    ::setenv("FIRESTORE_EMULATOR_HOST", ("127.0.0.1:" + std::to_string(emulator_port_)).c_str(), 1);
    reference_agent::SidecarClient emulator("http://127.0.0.1:" + std::to_string(emulator_port_),
                                            std::chrono::milliseconds(5000));
    emulator.Call("PUT", "/emulator/v1/faults",
                  json{{"errorRate", 0}, {"delayRate", 0}, {"dropRate", 0}});
  }
  if (cluster()) ::setenv("NATS_URL", NatsUrl().c_str(), 1);  // the store URL names no host
  auto store = agentckpt::OpenStore(SidecarEnv()["CKPT_STORE"]);
  if (!store.ok()) return store.status();
  auto list = (*store)->List(o_.agent_id, 1000);
  if (!list.ok()) return list.status();
  std::set<int64_t> stored;
  for (const auto& info : *list) stored.insert(info.sequence_number);
  auto latest = (*store)->GetLatestVerified(o_.agent_id);
  if (!latest.ok()) return latest.status();
  int64_t oldest_kept = stored.empty() ? 0 : *stored.begin();
  int missing = 0;
  for (const auto& [seq, c] : confirmed_) {
    if (seq >= oldest_kept && stored.count(seq) == 0) ++missing;
  }
  // Every checkpoint listed reads back, verified (not only the newest).
  int unreadable = 0;
  json unreadable_errors = json::array();
  for (const auto& info : *list) {
    auto cp = (*store)->GetById(o_.agent_id, info.checkpoint_id);
    if (cp.ok()) continue;
    ++unreadable;
    if (unreadable_errors.size() < 5) unreadable_errors.push_back(cp.status().ToString());
  }
  int64_t newest_confirmed = confirmed_.empty() ? 0 : confirmed_.rbegin()->first;
  *out = {{"stored", stored.size()},
          {"latestVerifiedSeq", latest->checkpoint.sequence_number},
          {"skippedCorrupt", latest->skipped.size()},
          {"newestConfirmedSeq", newest_confirmed},
          {"confirmedMissingWithinRetention", missing},
          {"listedUnreadable", unreadable},
          {"listedUnreadableErrors", unreadable_errors},
          {"pass", missing == 0 && unreadable == 0 && latest->skipped.empty() &&
                       latest->checkpoint.sequence_number >= newest_confirmed}};
  return agentckpt::OkStatus();
}

json ChaosRun::LedgerSummary() const {
  std::map<std::string, int> by_point;
  int interrupted = 0, surfaced = 0, not_surfaced = 0, not_retried = 0;
  for (const Mark& c : crashes_) {
    ++by_point[c.what];
    if (c.what != "after_begin" && c.what != "after_effect") continue;
    ++interrupted;  // begun, not ended: the next begin of the key must answer OUTCOME_UNKNOWN
    const Mark* next = nullptr;
    for (const Mark& m : key_marks_) {
      if (m.key == c.key && m.t > c.t) {
        next = &m;
        break;
      }
    }
    if (next == nullptr) {
      ++not_retried;
    } else if (next->what == "unknown") {
      ++surfaced;
    } else {
      ++not_surfaced;
    }
  }
  return {{"injectedCrashes", by_point},
          {"interruptedWriteCalls", interrupted},
          {"surfacedOutcomeUnknown", surfaced},
          {"endedWithoutOutcomeUnknown", not_surfaced},
          {"notRetriedByRunEnd", not_retried},
          {"sinkExecutions", sink_executions_},
          {"duplicateExecutions", duplicates_total_},
          {"completedKeysReexecuted", reexecuted_completed_}};
}

}  // namespace chaos
