#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/restore/prompt_test_util.h"
#include "tests/restore/restorer_fixture.h"
#include "tests/support/temp_dir.h"
#include "tests/workspace/git_test_repo.h"
#include "workspace/git_workspace.h"

namespace agentckpt {
namespace {

using testing::kAgent;
using testing::MakeReplay;
using testing::RestorerTest;
using testing::TempDir;

class RestorerWorkspaceTest : public RestorerTest {
 protected:
  void SetUp() override {
    RestorerTest::SetUp();
    repo_ = std::make_unique<testing::GitTestRepo>(work_.path());
    repo_->Write("post.md", "v1\n");
    repo_->Stage("post.md");
    head_ = repo_->Commit("first");
    opts_.workspace_dir = work_.path();
  }
  TempDir work_;
  std::unique_ptr<testing::GitTestRepo> repo_;
  std::string head_;
  RestoreOptions opts_;
};

// A restore the agent did not ask for at its own start (the sidecar's start-up restore, POST
// /v1/restore, checkpoint.restore) never changes the tree, even when it conflicts.
TEST_F(RestorerWorkspaceTest, ConflictingChangesAreLeftInPlaceUnlessTheAgentAsks) {
  Put(3, Workspace{{}, false, head_, "main"});  // clean at the checkpoint
  repo_->Write("post.md", "v2, being written by the running agent\n");
  repo_->Write("notes.txt", "untracked\n");
  auto r = Run(opts_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->workspace_stashed);
  EXPECT_TRUE(r->workspace_conflict_left);
  EXPECT_TRUE(repo_->Stashes().empty());
  EXPECT_EQ(repo_->Read("post.md"), "v2, being written by the running agent\n");
  EXPECT_EQ(repo_->Read("notes.txt"), "untracked\n");
  EXPECT_NE(r->prompt.find("WORKSPACE CHANGED"), std::string::npos);
  EXPECT_EQ(r->prompt.find("WORKSPACE STASHED"), std::string::npos);
  EXPECT_EQ(events_->restored().at(0)["workspaceStashed"], false);
  EXPECT_EQ(events_->restored().at(0)["workspaceChangesLeft"], true);
}

TEST_F(RestorerWorkspaceTest, ConflictingChangesAreStashedUnderTheCheckpointsName) {
  Checkpoint cp = Put(3, Workspace{{}, false, head_, "main"});  // clean at the checkpoint
  repo_->Write("post.md", "v2, written after the checkpoint\n");
  repo_->Write("notes.txt", "untracked\n");
  auto r = Run(opts_, true, WorkspaceAction::kStashConflicts);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->workspace_stashed) << r->workspace_error;
  EXPECT_NE(r->stash_message.find(cp.checkpoint_id), std::string::npos);
  EXPECT_NE(r->stash_message.find("sequence 3"), std::string::npos);
  auto stashes = repo_->Stashes();
  ASSERT_EQ(stashes.size(), 1u);
  EXPECT_EQ(stashes[0].second, r->stash_commit);
  EXPECT_NE(stashes[0].first.find(cp.checkpoint_id), std::string::npos);
  auto now = ReadWorkspace(work_.path());
  ASSERT_TRUE(now.ok());
  EXPECT_FALSE(now->uncommitted_changes);
  EXPECT_NE(r->prompt.find("WORKSPACE STASHED"), std::string::npos);
  EXPECT_NE(r->prompt.find("git stash pop"), std::string::npos);
  EXPECT_NE(r->prompt.find("- notes.txt"), std::string::npos);
  EXPECT_EQ(events_->restored().at(0)["workspaceStashed"], true);
  EXPECT_FALSE(events_->restored().at(0).contains("workspaceChangesLeft"));
}

TEST_F(RestorerWorkspaceTest, ChangesTheCheckpointRecordedAreLeftAlone) {
  repo_->Write("post.md", "v2 in progress\n");
  Put(3, Workspace{{"post.md"}, true, head_, "main"});
  auto r = Run(opts_, true, WorkspaceAction::kStashConflicts);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->workspace_stashed);
  EXPECT_TRUE(repo_->Stashes().empty());
  auto now = ReadWorkspace(work_.path());
  ASSERT_TRUE(now.ok());
  EXPECT_TRUE(now->uncommitted_changes);
}

TEST_F(RestorerWorkspaceTest, DryRunWritesNothing) {
  Put(3, Workspace{{}, false, head_, "main"});
  repo_->Write("post.md", "changed\n");
  replay_->result = MakeReplay(3, 1, 100);
  opts_.dry_run = true;
  auto r = Run(opts_, true, WorkspaceAction::kStashConflicts);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->sequence_number, 3);
  EXPECT_EQ(r->replayed, 3u);  // the replay itself is side-effect free and still runs
  EXPECT_FALSE(r->workspace_stashed);
  EXPECT_TRUE(repo_->Stashes().empty());
  auto now = ReadWorkspace(work_.path());
  ASSERT_TRUE(now.ok());
  EXPECT_TRUE(now->uncommitted_changes);
  EXPECT_TRUE(events_->log().empty());
  EXPECT_EQ(StoredStatus(), "");
  EXPECT_FALSE(r->prompt.empty());
}

TEST_F(RestorerWorkspaceTest, UnreadableWorkspaceIsReportedNotFatal) {
  Put(3);
  opts_.workspace_dir = tmp_.path();  // not a git working tree
  auto r = Run(opts_);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->workspace_error.empty());
  EXPECT_NE(r->prompt.find("WORKSPACE UNKNOWN"), std::string::npos);
}

}  // namespace
}  // namespace agentckpt
