// Folding the stored journal into a loaded checkpoint: what restore and the sidecar's context
// seed both do after CheckpointStore::GetLatestVerified (docs/journal.md "Restore").
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/checkpoint.h"
#include "journal/journal_fold.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

struct JournalLoad {
  JournalFoldReport fold;     // what was folded in, and where it stopped
  int64_t base_sequence = 0;  // the journal sequence the checkpoint itself included
  int64_t tail_bytes = 0;     // stored size of the entries folded in
  std::string error;          // reading the journal failed: nothing was folded
  bool journal = false;       // the store keeps a journal (else nothing was read)
};

// Reads the agent's journal after cp->journal (or from the start when the checkpoint has none)
// and folds the verified entries into `cp` (FoldJournal). `cp` may be a fresh Checkpoint holding
// only agent_id (no checkpoint stored yet): the journal is then folded into an empty context.
// Never fails: a store error is reported in `error` and `cp` is left as it was.
JournalLoad FoldStoredJournal(CheckpointStore* store, Checkpoint* cp);

// One line for logs and the restoration prompt, e.g. "12 journal entries folded in (through
// sequence 340)" plus the stop reason when the fold stopped early; "" when there was nothing.
std::string DescribeJournalLoad(const JournalLoad& load);

}  // namespace agentckpt
