// The journal methods of stores that keep no journal (see CheckpointStore::SupportsJournal), and
// ListAgents of stores that cannot list.
#include "store/checkpoint_store.h"

namespace agentckpt {

namespace {
Status NoJournal() { return FailedPreconditionError("this store keeps no journal"); }
}  // namespace

Status CheckpointStore::AppendJournal(const std::string&, const std::vector<JournalEntry>&,
                                      const std::optional<LeaseToken>&) {
  return NoJournal();
}

StatusOr<std::vector<JournalEntry>> CheckpointStore::ReadJournal(const std::string&, int64_t) {
  return NoJournal();
}

StatusOr<JournalStats> CheckpointStore::GetJournalStats(const std::string&) { return NoJournal(); }

StatusOr<std::vector<std::string>> CheckpointStore::ListAgents() {
  return FailedPreconditionError("this store cannot list agents");
}

}  // namespace agentckpt
