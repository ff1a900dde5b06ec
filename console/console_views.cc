#include "console/console_views.h"

#include <algorithm>
#include <charconv>

#include "checkpoint/checkpoint_json.h"
#include "common/status_macros.h"
#include "common/time_format.h"
#include "console/checkpoint_diff.h"
#include "gate/gate_record.h"
#include "store/journal_load.h"

namespace agentckpt {
namespace {

using nlohmann::json;

constexpr int kTimelineMax = 1000;   // checkpoints on a timeline at most
constexpr int kDensityBuckets = 48;  // journal density buckets

// "latest", a sequence number or a checkpoint id.
StatusOr<Checkpoint> Load(CheckpointStore* store, const std::string& agent,
                          const std::string& which) {
  if (which == "latest") {
    ASSIGN_OR_RETURN(LatestVerified l, store->GetLatestVerified(agent));
    return l.checkpoint;
  }
  int64_t seq = 0;
  auto [end, ec] = std::from_chars(which.data(), which.data() + which.size(), seq);
  if (ec == std::errc() && end == which.data() + which.size()) {
    return store->GetBySequence(agent, seq);
  }
  return store->GetById(agent, which);
}

}  // namespace

void SetFleetRecordFields(const AgentRecord& rec, json* row) {
  (*row)["status"] = rec.status;
  (*row)["updatedAt"] = rec.updated_at_ms > 0 ? json(FormatRfc3339Millis(rec.updated_at_ms)) : json();
  (*row)["lastSequence"] = rec.last_sequence;
  (*row)["leaseEpoch"] = rec.lease_epoch;
}

json FleetRow(CheckpointStore* store, const AgentRecord& rec, int64_t now_ms) {
  const std::string& agent = rec.agent_id;
  json row = {{"agentId", agent}};
  SetFleetRecordFields(rec, &row);
  Checkpoint cp;
  cp.agent_id = agent;
  auto latest = store->GetLatestVerified(agent);
  row["corrupted"] = 0;
  row["lastCheckpoint"] = nullptr;
  if (latest.ok()) {
    cp = latest->checkpoint;
    row["corrupted"] = latest->skipped.size();
    row["lastCheckpoint"] = {{"sequenceNumber", cp.sequence_number},
                             {"timestamp", FormatRfc3339Millis(cp.timestamp_ms)},
                             {"ageMs", now_ms - cp.timestamp_ms},
                             {"triggerReason", std::string(TriggerReasonName(cp.trigger_reason))}};
  } else if (latest.status().code() != StatusCode::kNotFound) {
    row["error"] = latest.status().ToString();
    return row;
  } else if (rec.last_sequence > 0) {
    // Checkpoints were written but none verifies: every listed one is corrupted.
    auto listed = store->List(agent, kTimelineMax);
    if (listed.ok()) row["corrupted"] = listed->size();
  }
  JournalLoad journal = FoldStoredJournal(store, &cp);
  if (!journal.error.empty()) row["error"] = "journal: " + journal.error;
  int pending = 0;
  if (!cp.gates.empty()) {
    auto gates = GatesFromJson(json::parse(cp.gates, nullptr, false));
    if (gates.ok()) {
      for (const Gate& g : *gates) pending += g.state == GateState::kPending;
    }
  }
  int unknown = 0;
  if (cp.ledger) {
    for (const LedgerCall& c : cp.ledger->open) {
      unknown += c.state == LedgerCallState::kOutcomeUnknown;
    }
  }
  row["pendingGates"] = pending;
  row["outcomeUnknown"] = unknown;
  return row;
}

namespace {

// Phases as bands: consecutive checkpoints with the same task and phase make one band.
json PhaseBands(const json& marks) {
  json bands = json::array();
  for (const json& m : marks) {
    if (!m.contains("phase") || m["phase"].is_null()) continue;
    if (!bands.empty() && bands.back()["phase"] == m["phase"] &&
        bands.back()["taskId"] == m["taskId"]) {
      bands.back()["to"] = m["timestamp"];
      bands.back()["toSequence"] = m["sequenceNumber"];
      continue;
    }
    bands.push_back({{"phase", m["phase"]},
                     {"taskId", m["taskId"]},
                     {"from", m["timestamp"]},
                     {"to", m["timestamp"]},
                     {"fromSequence", m["sequenceNumber"]},
                     {"toSequence", m["sequenceNumber"]}});
  }
  return bands;
}

json JournalDensity(const std::vector<JournalEntry>& entries, json* restores) {
  json out = {{"entries", entries.size()}, {"buckets", json::array()}};
  int64_t epoch = -1;
  for (const JournalEntry& e : entries) {
    if (e.epoch != epoch) {
      // A new writer epoch: a sidecar started (it restores before it writes).
      if (epoch != -1 || e.sequence == 1) {
        restores->push_back({{"epoch", e.epoch},
                             {"at", FormatRfc3339Millis(e.timestamp_ms)},
                             {"journalSequence", e.sequence}});
      }
      epoch = e.epoch;
    }
  }
  if (entries.empty()) return out;
  int64_t lo = entries.front().timestamp_ms, hi = entries.back().timestamp_ms;
  for (const JournalEntry& e : entries) {
    lo = std::min(lo, e.timestamp_ms);
    hi = std::max(hi, e.timestamp_ms);
  }
  const int64_t width = std::max<int64_t>(1, (hi - lo) / kDensityBuckets + 1);
  std::vector<int64_t> counts(kDensityBuckets, 0);
  for (const JournalEntry& e : entries) {
    ++counts[std::min<size_t>(kDensityBuckets - 1, static_cast<size_t>((e.timestamp_ms - lo) / width))];
  }
  for (int i = 0; i < kDensityBuckets; ++i) {
    out["buckets"].push_back({{"from", FormatRfc3339Millis(lo + i * width)},
                              {"to", FormatRfc3339Millis(lo + (i + 1) * width)},
                              {"count", counts[i]}});
  }
  return out;
}

}  // namespace

StatusOr<json> FleetView(CheckpointStore* store, int64_t now_ms) {
  ASSIGN_OR_RETURN(std::vector<std::string> agents, store->ListAgents());
  json rows = json::array();
  for (const std::string& a : agents) {
    auto rec = store->GetAgent(a);
    if (!rec.ok()) {
      rows.push_back({{"agentId", a}, {"error", rec.status().ToString()}});
      continue;
    }
    rec->agent_id = a;
    rows.push_back(FleetRow(store, *rec, now_ms));
  }
  return json{{"generatedAt", FormatRfc3339Millis(now_ms)}, {"agents", rows}};
}

StatusOr<json> TimelineView(CheckpointStore* store, const std::string& agent) {
  ASSIGN_OR_RETURN(AgentRecord rec, store->GetAgent(agent));
  ASSIGN_OR_RETURN(std::vector<CheckpointInfo> infos, store->List(agent, kTimelineMax));
  if (infos.empty() && rec.last_sequence == 0 && rec.status.empty() && rec.lease_epoch == 0) {
    return NotFoundError("no agent " + agent + " in the store");
  }
  std::reverse(infos.begin(), infos.end());  // oldest first
  json marks = json::array();
  for (const CheckpointInfo& info : infos) {
    json m = {{"sequenceNumber", info.sequence_number},
              {"checkpointId", info.checkpoint_id},
              {"timestamp", FormatRfc3339Millis(info.timestamp_ms)},
              {"triggerReason", std::string(TriggerReasonName(info.trigger_reason))},
              {"sizeBytes", info.size_bytes},
              {"ok", true},
              {"phase", nullptr},
              {"taskId", nullptr},
              {"progress", nullptr}};
    auto cp = store->GetBySequence(agent, info.sequence_number);
    if (!cp.ok()) {
      m["ok"] = false;
      m["reason"] = cp.status().ToString();
    } else if (cp->active_task) {
      m["phase"] = std::string(TaskPhaseName(cp->active_task->phase));
      m["taskId"] = cp->active_task->task_id;
      m["progress"] = cp->active_task->progress;
    }
    marks.push_back(std::move(m));
  }
  json restores = json::array();
  json density = {{"entries", 0}, {"buckets", json::array()}};
  if (store->SupportsJournal()) {
    ASSIGN_OR_RETURN(std::vector<JournalEntry> entries, store->ReadJournal(agent, 0));
    density = JournalDensity(entries, &restores);
  }
  return json{{"agentId", agent},
              {"status", rec.status},
              {"lastSequence", rec.last_sequence},
              {"leaseEpoch", rec.lease_epoch},
              {"checkpoints", marks},
              {"restores", restores},
              {"phases", PhaseBands(marks)},
              {"journal", density}};
}

StatusOr<json> CheckpointView(CheckpointStore* store, const std::string& agent,
                              const std::string& which) {
  auto cp = Load(store, agent, which);
  if (cp.ok()) {
    return json{{"agentId", agent},
                {"verification", {{"ok", true}, {"contentSha256", cp->content_sha256}}},
                {"checkpoint", CheckpointToJsonValue(*cp, /*include_hash=*/true)}};
  }
  if (cp.status().code() != StatusCode::kDataLoss) return cp.status();
  return json{{"agentId", agent},
              {"verification", {{"ok", false}, {"reason", cp.status().ToString()}}},
              {"checkpoint", nullptr}};
}

StatusOr<json> DiffView(CheckpointStore* store, const std::string& agent, const std::string& from,
                        const std::string& to) {
  ASSIGN_OR_RETURN(Checkpoint a, Load(store, agent, from));
  ASSIGN_OR_RETURN(Checkpoint b, Load(store, agent, to));
  return DiffCheckpoints(a, b);
}

}  // namespace agentckpt
