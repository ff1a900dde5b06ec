// When a restore stashes the agent's working tree: the rule and the stash message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "checkpoint/checkpoint.h"

namespace agentckpt {

// True if the working tree found at restore time holds uncommitted changes that the checkpoint
// does not account for: the checkpoint recorded no workspace, or a different commit, branch or
// set of modified files. A clean tree never conflicts. Pure; thread-safe.
bool WorkspaceConflicts(const Workspace& now, const std::optional<Workspace>& at_checkpoint);

// The stash message naming the checkpoint, e.g.
// "agentckpt restore: uncommitted changes not in checkpoint 3f0b... (sequence 12)".
std::string StashMessageFor(const std::string& checkpoint_id, int64_t sequence_number);

}  // namespace agentckpt
