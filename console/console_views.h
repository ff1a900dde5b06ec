// The read-only views of the web console (docs/console.md), each one JSON document built from a
// store: the fleet, an agent's timeline, one checkpoint, the diff of two checkpoints. Every
// function reads only (no lease, no status change, no write). Thread-safe when the store is.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

// Every agent of the store (CheckpointStore::ListAgents) with its status, its newest verified
// checkpoint's sequence and age, the corrupted checkpoints newer than it (those a restore
// skips), pending gates and outcome_unknown tool calls (from the checkpoint plus the journal,
// as restore folds them). An agent whose state cannot be read gets an "error" member instead of
// failing the whole fleet. kFailedPrecondition for a store that cannot list, kUnavailable.
StatusOr<nlohmann::json> FleetView(CheckpointStore* store, int64_t now_ms);

// One row of the fleet view for the agent `rec` names (rec.agent_id), given its record as just
// read: the row's status, updatedAt, lastSequence and leaseEpoch come from `rec`, the rest from
// the store. Never fails: what cannot be read becomes the row's "error".
nlohmann::json FleetRow(CheckpointStore* store, const AgentRecord& rec, int64_t now_ms);
// Sets the four members of a fleet row that come from the agent record.
void SetFleetRecordFields(const AgentRecord& rec, nlohmann::json* row);

// The agent's timeline: its checkpoints oldest first (trigger, phase, progress, verification),
// its restores (each new writer epoch in the stored journal), its task phases as bands and the
// journal's density (entries per time bucket). kNotFound when the agent has no record and no
// checkpoint; kUnavailable.
StatusOr<nlohmann::json> TimelineView(CheckpointStore* store, const std::string& agent_id);

// One checkpoint, `which` being "latest", a sequence number or a checkpoint id: its verification
// (ok, or the reason it fails) and, when it verifies, the whole document. kNotFound.
StatusOr<nlohmann::json> CheckpointView(CheckpointStore* store, const std::string& agent_id,
                                        const std::string& which);

// The diff of two checkpoints (console/checkpoint_diff.h), each named as in CheckpointView.
// kNotFound, kDataLoss when one does not verify.
StatusOr<nlohmann::json> DiffView(CheckpointStore* store, const std::string& agent_id,
                                  const std::string& from, const std::string& to);

}  // namespace agentckpt
