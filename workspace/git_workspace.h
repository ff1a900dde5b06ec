// Git working-directory state of an agent (the checkpoint's `workspace` field) and stashing of
// uncommitted changes, through libgit2 (no `git` process is run).
//
// `dir` must be the top of a non-bare working tree (the directory that holds `.git`); parent
// directories are not searched, so a workspace never silently resolves to an enclosing repository.
// Both functions are thread-safe: each call opens its own repository handle. Two concurrent calls
// on the same directory are as safe as two `git` commands run at once (libgit2 takes git's locks).
#pragma once

#include <string>

#include "checkpoint/checkpoint.h"
#include "common/status.h"

namespace agentckpt {

// Reads the working directory's state:
//   modified_files       paths (relative to `dir`, '/'-separated, sorted, unique) that differ
//                        between HEAD, the index and the working tree: staged, unstaged, deleted,
//                        renamed and untracked files; ignored files are not listed. At most
//                        limits::kModifiedFiles are kept (the first in sorted order).
//   uncommitted_changes  true if any such file exists (even beyond the kept ones).
//   last_commit_hash     hex id of the commit HEAD points to; empty on an unborn branch.
//   branch_name          short name of the current branch ("main"), also on an unborn branch;
//                        empty when HEAD is detached.
// Non-UTF-8 path bytes are replaced by U+FFFD. Errors: kFailedPrecondition if `dir` is not the top
// of a non-bare git working tree (or does not exist); kUnavailable if the repository cannot be
// read (e.g. a corrupted index or a lock held too long).
StatusOr<Workspace> ReadWorkspace(const std::string& dir);

// Stashes every uncommitted change in `dir`, untracked files included (like
// `git stash push --include-untracked -m message`), leaving the working tree clean at HEAD.
// Returns the hex id of the stash commit (refs/stash). The stasher is the repository's configured
// user, or "agentckpt <agentckpt@localhost>" when none is configured.
// Errors: kNotFound if there is nothing to stash; kFailedPrecondition if `dir` is not the top of a
// non-bare working tree or its branch has no commit yet (git cannot stash there); kUnavailable on
// other libgit2 failures (e.g. the index is locked).
StatusOr<std::string> StashChanges(const std::string& dir, const std::string& message);

}  // namespace agentckpt
