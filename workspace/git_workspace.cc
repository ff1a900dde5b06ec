#include "workspace/git_workspace.h"

#include <git2.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>

#include "checkpoint/limits.h"
#include "common/status_macros.h"
#include "common/utf8.h"

namespace agentckpt {
namespace {

struct RepoCloser {
  void operator()(git_repository* r) const { git_repository_free(r); }
};
struct RefCloser {
  void operator()(git_reference* r) const { git_reference_free(r); }
};
struct StatusListCloser {
  void operator()(git_status_list* l) const { git_status_list_free(l); }
};
struct SignatureCloser {
  void operator()(git_signature* s) const { git_signature_free(s); }
};
using RepoPtr = std::unique_ptr<git_repository, RepoCloser>;
using RefPtr = std::unique_ptr<git_reference, RefCloser>;
using StatusListPtr = std::unique_ptr<git_status_list, StatusListCloser>;
using SignaturePtr = std::unique_ptr<git_signature, SignatureCloser>;

// libgit2 is initialised once per process and never shut down (its global state is then valid
// for every thread for the life of the process).
void InitLibgit2() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

// "what: libgit2's last error message" for the calling thread.
std::string GitError(std::string_view what) {
  const git_error* e = git_error_last();
  std::string msg(what);
  msg += ": ";
  msg += (e != nullptr && e->message != nullptr) ? e->message : "unknown libgit2 error";
  return msg;
}

std::string OidHex(const git_oid* oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof(buf), oid);
  return std::string(buf);
}

StatusOr<RepoPtr> OpenWorkTree(const std::string& dir) {
  InitLibgit2();
  git_repository* raw = nullptr;
  int rc = git_repository_open_ext(&raw, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
  RepoPtr repo(raw);
  if (rc == GIT_ENOTFOUND) {
    return FailedPreconditionError("workspace " + dir + " is not a git working tree");
  }
  if (rc < 0) return UnavailableError(GitError("opening git repository " + dir));
  if (git_repository_is_bare(repo.get())) {
    return FailedPreconditionError("workspace " + dir + " is a bare git repository");
  }
  return repo;
}

// Fills branch_name and last_commit_hash from HEAD (unborn and detached handled).
Status ReadHead(git_repository* repo, Workspace* ws) {
  git_reference* raw = nullptr;
  if (git_reference_lookup(&raw, repo, "HEAD") < 0) {
    return UnavailableError(GitError("reading HEAD"));
  }
  RefPtr head(raw);
  if (git_reference_type(head.get()) == GIT_REFERENCE_SYMBOLIC) {
    std::string_view target = git_reference_symbolic_target(head.get());
    constexpr std::string_view kHeads = "refs/heads/";
    if (target.substr(0, kHeads.size()) == kHeads) target.remove_prefix(kHeads.size());
    ws->branch_name = std::string(Utf8TruncateChars(Utf8Sanitize(target), limits::kShortTextChars));
  }
  int unborn = git_repository_head_unborn(repo);
  if (unborn < 0) return UnavailableError(GitError("reading HEAD"));
  if (unborn == 1) return OkStatus();
  git_oid oid;
  if (git_reference_name_to_id(&oid, repo, "HEAD") < 0) {
    return UnavailableError(GitError("resolving HEAD"));
  }
  ws->last_commit_hash = OidHex(&oid);
  return OkStatus();
}

Status ReadChangedPaths(git_repository* repo, Workspace* ws) {
  git_status_options opts;
  git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION);
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
  git_status_list* raw = nullptr;
  if (git_status_list_new(&raw, repo, &opts) < 0) {
    return UnavailableError(GitError("reading git status"));
  }
  StatusListPtr list(raw);
  std::set<std::string> paths;
  auto add = [&paths](const git_diff_delta* delta) {
    if (delta == nullptr) return;
    if (delta->old_file.path != nullptr) paths.insert(Utf8Sanitize(delta->old_file.path));
    if (delta->new_file.path != nullptr) paths.insert(Utf8Sanitize(delta->new_file.path));
  };
  size_t n = git_status_list_entrycount(list.get());
  for (size_t i = 0; i < n; ++i) {
    const git_status_entry* e = git_status_byindex(list.get(), i);
    if (e == nullptr || e->status == GIT_STATUS_CURRENT || (e->status & GIT_STATUS_IGNORED)) {
      continue;
    }
    add(e->head_to_index);
    add(e->index_to_workdir);
  }
  ws->uncommitted_changes = !paths.empty();
  for (const std::string& p : paths) {
    if (ws->modified_files.size() == limits::kModifiedFiles) break;
    ws->modified_files.push_back(p);
  }
  return OkStatus();
}

}  // namespace

StatusOr<Workspace> ReadWorkspace(const std::string& dir) {
  ASSIGN_OR_RETURN(RepoPtr repo, OpenWorkTree(dir));
  Workspace ws;
  if (Status s = ReadHead(repo.get(), &ws); !s.ok()) return s.WithContext(dir);
  if (Status s = ReadChangedPaths(repo.get(), &ws); !s.ok()) return s.WithContext(dir);
  return ws;
}

StatusOr<std::string> StashChanges(const std::string& dir, const std::string& message) {
  ASSIGN_OR_RETURN(RepoPtr repo, OpenWorkTree(dir));
  int unborn = git_repository_head_unborn(repo.get());
  if (unborn < 0) return UnavailableError(GitError("reading HEAD of " + dir));
  if (unborn == 1) {
    return FailedPreconditionError("cannot stash in " + dir + ": the branch has no commit yet");
  }
  git_signature* raw_sig = nullptr;
  if (git_signature_default(&raw_sig, repo.get()) < 0 &&
      git_signature_now(&raw_sig, "agentckpt", "agentckpt@localhost") < 0) {
    return InternalError(GitError("creating the stash signature"));
  }
  SignaturePtr sig(raw_sig);
  git_oid oid;
  int rc =
      git_stash_save(&oid, repo.get(), sig.get(), message.c_str(), GIT_STASH_INCLUDE_UNTRACKED);
  if (rc == GIT_ENOTFOUND) return NotFoundError("nothing to stash in " + dir);
  if (rc == GIT_EUNBORNBRANCH) {
    return FailedPreconditionError("cannot stash in " + dir + ": the branch has no commit yet");
  }
  if (rc < 0) return UnavailableError(GitError("stashing changes in " + dir));
  return OidHex(&oid);
}

}  // namespace agentckpt
