#include "workspace/git_workspace.h"

#include <git2.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

using testing::TempDir;

// A real git repository built with libgit2 in a temp dir (no `git` process).
class GitRepo {
 public:
  explicit GitRepo(const std::string& dir, bool bare = false) : dir_(dir) {
    git_libgit2_init();
    git_repository_init_options opts;
    git_repository_init_options_init(&opts, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
    opts.flags = GIT_REPOSITORY_INIT_MKPATH | (bare ? GIT_REPOSITORY_INIT_BARE : 0);
    opts.initial_head = "main";
    Check(git_repository_init_ext(&repo_, dir.c_str(), &opts), "init");
  }
  ~GitRepo() {
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
    Check(git_commit_create(&commit_id, repo_, "HEAD", sig, sig, nullptr, message.c_str(), tree,
                            n, parents),
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

TEST(ReadWorkspaceTest, NotARepositoryIsFailedPrecondition) {
  TempDir tmp;
  auto ws = ReadWorkspace(tmp.path());
  ASSERT_FALSE(ws.ok());
  EXPECT_EQ(ws.status().code(), StatusCode::kFailedPrecondition) << ws.status().ToString();
  auto missing = ReadWorkspace(tmp.File("no-such-dir"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
}

TEST(ReadWorkspaceTest, SubdirectoryOfARepositoryIsNotSearchedUpward) {
  TempDir tmp;
  GitRepo repo(tmp.path());
  repo.Write("sub/a.txt", "a");
  auto ws = ReadWorkspace(tmp.File("sub"));
  ASSERT_FALSE(ws.ok());
  EXPECT_EQ(ws.status().code(), StatusCode::kFailedPrecondition);
}

TEST(ReadWorkspaceTest, BareRepositoryIsFailedPrecondition) {
  TempDir tmp;
  GitRepo repo(tmp.File("bare.git"), /*bare=*/true);
  auto ws = ReadWorkspace(repo.dir());
  ASSERT_FALSE(ws.ok());
  EXPECT_EQ(ws.status().code(), StatusCode::kFailedPrecondition);
}

TEST(ReadWorkspaceTest, UnbornBranchHasBranchNameAndNoCommit) {
  TempDir tmp;
  GitRepo repo(tmp.path());
  repo.Write("notes.md", "draft");
  auto ws = ReadWorkspace(tmp.path());
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  EXPECT_EQ(ws->branch_name, "main");
  EXPECT_EQ(ws->last_commit_hash, "");
  EXPECT_TRUE(ws->uncommitted_changes);
  EXPECT_EQ(ws->modified_files, std::vector<std::string>{"notes.md"});
}

TEST(ReadWorkspaceTest, CleanRepositoryAfterCommit) {
  TempDir tmp;
  GitRepo repo(tmp.path());
  repo.Write("README.md", "hello\n");
  repo.Stage("README.md");
  std::string head = repo.Commit("first");
  auto ws = ReadWorkspace(tmp.path());
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  EXPECT_EQ(ws->last_commit_hash, head);
  EXPECT_EQ(ws->last_commit_hash.size(), 40u);
  EXPECT_EQ(ws->branch_name, "main");
  EXPECT_FALSE(ws->uncommitted_changes);
  EXPECT_TRUE(ws->modified_files.empty());
}

TEST(ReadWorkspaceTest, ListsStagedUnstagedDeletedAndUntrackedButNotIgnored) {
  TempDir tmp;
  GitRepo repo(tmp.path());
  repo.Write(".gitignore", "*.log\n");
  repo.Write("src/main.cc", "int main() {}\n");
  repo.Write("src/gone.cc", "// old\n");
  repo.Write("docs/guide.md", "guide\n");
  for (const char* f : {".gitignore", "src/main.cc", "src/gone.cc", "docs/guide.md"}) {
    repo.Stage(f);
  }
  repo.Commit("base");

  repo.Write("src/main.cc", "int main() { return 1; }\n");  // unstaged modification
  repo.Write("docs/guide.md", "guide v2\n");                // staged modification
  repo.Stage("docs/guide.md");
  repo.Remove("src/gone.cc");                               // deleted
  repo.Write("new/dir/untracked.txt", "u");                 // untracked, nested
  repo.Write("staged_new.txt", "s");                        // new, staged
  repo.Stage("staged_new.txt");
  repo.Write("build.log", "ignored");                       // ignored

  auto ws = ReadWorkspace(tmp.path());
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  EXPECT_TRUE(ws->uncommitted_changes);
  std::vector<std::string> want = {"docs/guide.md", "new/dir/untracked.txt", "src/gone.cc",
                                   "src/main.cc", "staged_new.txt"};
  EXPECT_EQ(ws->modified_files, want);
}

TEST(ReadWorkspaceTest, DetachedHeadHasNoBranchName) {
  TempDir tmp;
  GitRepo repo(tmp.path());
  repo.Write("a.txt", "1");
  repo.Stage("a.txt");
  std::string first = repo.Commit("one");
  repo.Write("a.txt", "2");
  repo.Stage("a.txt");
  repo.Commit("two");
  repo.DetachAt(first);
  auto ws = ReadWorkspace(tmp.path());
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  EXPECT_EQ(ws->branch_name, "");
  EXPECT_EQ(ws->last_commit_hash, first);
}

TEST(StashChangesTest, StashesTrackedAndUntrackedChangesAndCleansTheTree) {
  TempDir tmp;
  GitRepo repo(tmp.path());
  repo.Write("a.txt", "base\n");
  repo.Stage("a.txt");
  std::string head = repo.Commit("base");
  repo.Write("a.txt", "changed\n");
  repo.Write("untracked.txt", "new\n");

  auto id = StashChanges(tmp.path(), "agentckpt: checkpoint c-1 seq 7");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(id->size(), 40u);

  auto stashes = repo.Stashes();
  ASSERT_EQ(stashes.size(), 1u);
  EXPECT_EQ(stashes[0].second, *id);
  EXPECT_NE(stashes[0].first.find("agentckpt: checkpoint c-1 seq 7"), std::string::npos)
      << stashes[0].first;

  auto ws = ReadWorkspace(tmp.path());
  ASSERT_TRUE(ws.ok());
  EXPECT_FALSE(ws->uncommitted_changes);
  EXPECT_TRUE(ws->modified_files.empty());
  EXPECT_EQ(ws->last_commit_hash, head);
}

TEST(StashChangesTest, NothingToStashIsNotFound) {
  TempDir tmp;
  GitRepo repo(tmp.path());
  repo.Write("a.txt", "base\n");
  repo.Stage("a.txt");
  repo.Commit("base");
  auto id = StashChanges(tmp.path(), "m");
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kNotFound) << id.status().ToString();
  EXPECT_TRUE(repo.Stashes().empty());
}

TEST(StashChangesTest, UnbornBranchIsFailedPrecondition) {
  TempDir tmp;
  GitRepo repo(tmp.path());
  repo.Write("a.txt", "x");
  auto id = StashChanges(tmp.path(), "m");
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kFailedPrecondition) << id.status().ToString();
}

TEST(StashChangesTest, NotARepositoryIsFailedPrecondition) {
  TempDir tmp;
  auto id = StashChanges(tmp.path(), "m");
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace agentckpt
