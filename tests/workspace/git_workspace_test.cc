#include "workspace/git_workspace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tests/workspace/git_test_repo.h"

namespace agentckpt {
namespace {

using testing::TempDir;

using GitRepo = testing::GitTestRepo;

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
  repo.Remove("src/gone.cc");                // deleted
  repo.Write("new/dir/untracked.txt", "u");  // untracked, nested
  repo.Write("staged_new.txt", "s");         // new, staged
  repo.Stage("staged_new.txt");
  repo.Write("build.log", "ignored");  // ignored

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
