#include "restore/workspace_conflict.h"

namespace agentckpt {

bool WorkspaceConflicts(const Workspace& now, const std::optional<Workspace>& at_checkpoint) {
  if (!now.uncommitted_changes) return false;
  if (!at_checkpoint) return true;
  const Workspace& then = *at_checkpoint;
  return !then.uncommitted_changes || then.last_commit_hash != now.last_commit_hash ||
         then.branch_name != now.branch_name || then.modified_files != now.modified_files;
}

std::string StashMessageFor(const std::string& checkpoint_id, int64_t sequence_number) {
  return "agentckpt restore: uncommitted changes not in checkpoint " + checkpoint_id +
         " (sequence " + std::to_string(sequence_number) + ")";
}

}  // namespace agentckpt
