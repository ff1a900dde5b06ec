// GitTestRepo: a real git repository built with libgit2 in a directory, for tests (no `git`
// process). Failures are reported as GoogleTest failures.
#pragma once

#include <git2.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace agentckpt::testing {

class GitTestRepo {
 public:
  explicit GitTestRepo(const std::string& dir, bool bare = false) : dir_(dir) {
    git_libgit2_init();
    git_repository_init_options opts;
    git_repository_init_options_init(&opts, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
    opts.flags = GIT_REPOSITORY_INIT_MKPATH | (bare ? GIT_REPOSITORY_INIT_BARE : 0);
    opts.initial_head = "main";
    Check(git_repository_init_ext(&repo_, dir.c_str(), &opts), "init");
  }
  ~GitTestRepo() {
    git_repository_free(repo_);
    git_libgit2_shutdown();
  }

  void Write(const std::string& rel, const std::string& content) {
    std::string path = dir_ + "/" + rel;
    for (size_t pos = path.find('/', dir_.size() + 1); pos != std::string::npos;
         pos = path.find('/', pos + 1)) {
      ::mkdir(path.substr(0, pos).c_str(), 0755);
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  }
  void Remove(const std::string& rel) { std::remove((dir_ + "/" + rel).c_str()); }
  // The file's bytes ("" when absent).
  std::string Read(const std::string& rel) const {
    std::ifstream in(dir_ + "/" + rel, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  void Stage(const std::string& rel) {
    git_index* index = nullptr;
    Check(git_repository_index(&index, repo_), "index");
    Check(git_index_add_bypath(index, rel.c_str()), "add");
    Check(git_index_write(index), "write index");
    git_index_free(index);
  }
  // Commits the index on HEAD; returns the commit id as hex.
  std::string Commit(const std::string& message) {
    git_index* index = nullptr;
    Check(git_repository_index(&index, repo_), "index");
    git_oid tree_id, commit_id;
    Check(git_index_write_tree(&tree_id, index), "write tree");
    git_index_free(index);
    git_tree* tree = nullptr;
    Check(git_tree_lookup(&tree, repo_, &tree_id), "tree");
    git_signature* sig = nullptr;
    Check(git_signature_new(&sig, "Test", "test@example.com", 1793760300, 0), "sig");
    git_commit* parent = nullptr;
    git_oid parent_id;
    int n = 0;
    if (git_reference_name_to_id(&parent_id, repo_, "HEAD") == 0) {
      Check(git_commit_lookup(&parent, repo_, &parent_id), "parent");
      n = 1;
    }
    const git_commit* parents[] = {parent};
    Check(git_commit_create(&commit_id, repo_, "HEAD", sig, sig, nullptr, message.c_str(), tree, n,
                            parents),
          "commit");
    git_commit_free(parent);
    git_signature_free(sig);
    git_tree_free(tree);
    char buf[GIT_OID_HEXSZ + 1];
    return git_oid_tostr(buf, sizeof(buf), &commit_id);
  }

  void DetachAt(const std::string& hex) {
    git_oid id;
    Check(git_oid_fromstr(&id, hex.c_str()), "oid");
    Check(git_repository_set_head_detached(repo_, &id), "detach");
  }

  // Message and id of the stash entries, newest first.
  std::vector<std::pair<std::string, std::string>> Stashes() {
    std::vector<std::pair<std::string, std::string>> out;
    git_stash_foreach(
        repo_,
        [](size_t, const char* msg, const git_oid* id, void* payload) {
          char buf[GIT_OID_HEXSZ + 1];
          static_cast<decltype(out)*>(payload)->emplace_back(msg,
                                                             git_oid_tostr(buf, sizeof(buf), id));
          return 0;
        },
        &out);
    return out;
  }

  const std::string& dir() const { return dir_; }

 private:
  static void Check(int rc, const char* what) {
    if (rc < 0) {
      const git_error* e = git_error_last();
      FAIL() << what << ": " << (e ? e->message : "?");
    }
  }
  std::string dir_;
  git_repository* repo_ = nullptr;
};

}  // namespace agentckpt::testing
