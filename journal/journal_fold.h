// Folding journal entries into a context: the context's JSON form, merge-patch diffs that
// record a change as a small payload, and the verified fold restore runs
// (docs/journal.md "Restore"). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "journal/journal_entry.h"
#include "ledger/ledger_state.h"

namespace agentckpt {

// The context's JSON form {"activeTask","contextSummary","workspace"} of a checkpoint.
nlohmann::json ContextJsonOf(const Checkpoint& cp);

// The RFC 7386 merge patch that turns `before` into `after` (objects: changed keys only, removed
// keys as null; anything else: `after` whole). Applying it to `before` yields `after` up to keys
// whose value is null, which the context form treats as absent.
nlohmann::json MakeMergePatch(const nlohmann::json& before, const nlohmann::json& after);

// Applies one entry's effect to a context JSON form and, for the ledger kinds, to `ledger`
// (an end or a succeeded/failed reconcile also appends the call to toolCallLog; the completed
// call is copied to *completed when not null). kDataLoss if the payload is not JSON or does not
// fit the kind, or a ledger kind comes without a ledger; nothing changes then.
Status ApplyJournalEntry(const JournalEntry& e, nlohmann::json* context,
                         LedgerState* ledger = nullptr,
                         std::optional<LedgerCall>* completed = nullptr);

struct JournalFoldReport {
  int applied = 0;            // entries folded in
  int64_t last_sequence = 0;  // the journal sequence the result includes
  std::string last_sha256;    // its hash (the checkpoint's own when nothing was folded)
  bool stopped = false;       // a damaged, torn or missing entry ended the fold early
  int64_t stopped_at = 0;     // the sequence of the entry that ended it
  std::string stop_reason;    // why
  int not_applied = 0;        // entries present after the stop
  // Calls the folded entries completed (ended or reconciled), in journal order.
  std::vector<LedgerCall> completed_calls;
};

// Folds `entries` (ascending sequence; entries at or below the checkpoint's journal position are
// ignored) into the context of `cp`, verifying each entry's hash and its link to the one
// before: the first must follow cp->journal (or the genesis when the checkpoint has none). The
// fold stops at the first entry that does not verify, does not link, does not belong to
// cp->agent_id, or does not apply, keeping everything before it; cp->journal is set to the
// position reached, and cp->ledger to the folded ledger when the checkpoint had one or an entry
// touched it (schemaVersion 2 then). Never fails.
JournalFoldReport FoldJournal(const std::vector<JournalEntry>& entries, Checkpoint* cp);

}  // namespace agentckpt
