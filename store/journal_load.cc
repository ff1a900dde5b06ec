#include "store/journal_load.h"

namespace agentckpt {

JournalLoad FoldStoredJournal(CheckpointStore* store, Checkpoint* cp) {
  JournalLoad out;
  out.base_sequence = cp->journal ? cp->journal->sequence : 0;
  out.fold.last_sequence = out.base_sequence;
  out.fold.last_sha256 = cp->journal ? cp->journal->sha256 : kJournalGenesisSha256;
  if (!store->SupportsJournal()) return out;
  out.journal = true;
  StatusOr<std::vector<JournalEntry>> entries = store->ReadJournal(cp->agent_id, out.base_sequence);
  if (!entries.ok()) {
    out.error = entries.status().ToString();
    return out;
  }
  out.fold = FoldJournal(*entries, cp);
  for (const JournalEntry& e : *entries) {
    if (e.sequence > out.base_sequence && e.sequence <= out.fold.last_sequence) {
      out.tail_bytes += JournalEntryBytes(e);
    }
  }
  return out;
}

std::string DescribeJournalLoad(const JournalLoad& load) {
  std::string t;
  if (!load.error.empty()) return "the journal could not be read (" + load.error + ")";
  if (load.fold.applied > 0) {
    t = std::to_string(load.fold.applied) + " journal " +
        (load.fold.applied == 1 ? "entry" : "entries") + " folded in (through sequence " +
        std::to_string(load.fold.last_sequence) + ")";
  }
  if (load.fold.stopped) {
    if (!t.empty()) t += "; ";
    t += "the journal fold stopped at sequence " + std::to_string(load.fold.stopped_at) + ": " +
         load.fold.stop_reason + " (" + std::to_string(load.fold.not_applied) +
         " later entries not applied)";
  }
  return t;
}

}  // namespace agentckpt
