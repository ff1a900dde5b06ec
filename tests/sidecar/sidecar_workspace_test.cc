// A sidecar restart never changes the agent's working tree: the real `agentckpt` binary with
// WORKSPACE_DIR set, a live agent process writing into the tree, SIGKILL and restart of the
// sidecar. Only the agent's own start (POST /v1/agent-start) may stash.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>

#include "nats/subjects.h"
#include "tests/sidecar/sidecar_test_env.h"

extern char** environ;

namespace agentckpt::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

json Body(const HttpReply& r) { return json::parse(r.body, nullptr, false); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Every file of the working tree (not .git) and its bytes.
std::map<std::string, std::string> Tree(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) {
      files[fs::relative(it->path(), dir).string()] = ReadFile(it->path().string());
    }
  }
  return files;
}

std::string Shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  return out;
}

// The agent: appends a numbered line to a tracked file and rewrites one of ten untracked notes
// per step, every 5 ms, until `stop` exists (at most 100,000 steps); then writes its step count
// to `done`. Stopped by its pid.
class WritingAgent {
 public:
  WritingAgent(const std::string& tree, const std::string& control) : control_(control) {
    std::string script = "cd '" + tree + "' && mkdir -p notes && i=0; while [ ! -e '" + control +
                         "/stop' ] && [ $i -lt 100000 ]; do echo \"line $i\" >> a.txt; "
                         "printf 'note %s' $i > notes/n$((i % 10)).txt; i=$((i + 1)); "
                         "echo $i > '" +
                         control + "/steps.tmp' && mv '" + control + "/steps.tmp' '" + control +
                         "/steps'; sleep 0.005; done; echo $i > '" + control + "/done'";
    const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
    EXPECT_EQ(::posix_spawn(&pid_, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ),
              0);
  }
  ~WritingAgent() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  // Steps completed so far.
  long Steps() const { return std::atol(ReadFile(control_ + "/steps").c_str()); }
  // Waits (bounded) until at least `n` steps are done.
  bool WaitSteps(long n) const {
    for (int i = 0; i < 20000 && Steps() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return Steps() >= n;
  }
  // Asks the agent to stop and reaps it; returns its step count.
  long Stop() {
    std::ofstream(control_ + "/stop") << "stop";
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return std::atol(ReadFile(control_ + "/done").c_str());
  }

 private:
  std::string control_;
  pid_t pid_ = -1;
};

class SidecarWorkspaceTest : public SidecarEnvTest {
 protected:
  void SetUp() override {
    SidecarEnvTest::SetUp();
    std::string setup = "cd " + tree_.path() +
                        " && git init -q -b main . && git config user.email t@example.com"
                        " && git config user.name t && echo a > a.txt && git add a.txt"
                        " && git commit -q -m first";
    ASSERT_EQ(std::system(setup.c_str()), 0);
  }
  // A sidecar on the tree, restoring at its start; it takes one checkpoint of the clean tree.
  std::unique_ptr<SidecarProcess> StartWithCheckpoint() {
    auto sidecar =
        StartSidecar({{"WORKSPACE_DIR", tree_.path()}, {"CKPT_RESTORE_ON_START", "true"}});
    auto put = HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json"));
    EXPECT_EQ(put.status, 200) << put.body;
    EXPECT_EQ(Body(put)["checkpoint"]["trigger"], "task_phase_change");
    return sidecar;
  }
  std::string Stashes() { return Shell("git -C '" + tree_.path() + "' stash list"); }

  TempDir tree_, control_;
};

TEST_F(SidecarWorkspaceTest, SidecarRestartLeavesALiveAgentsTreeByteIdentical) {
  auto sidecar = StartWithCheckpoint();
  WritingAgent agent(tree_.path(), control_.path());
  ASSERT_TRUE(agent.WaitSteps(5));
  sidecar->Kill();
  // The restarted sidecar restores at its start while the agent keeps writing.
  sidecar = StartSidecar({{"WORKSPACE_DIR", tree_.path()}, {"CKPT_RESTORE_ON_START", "true"}});
  HttpReply restoration = HttpCall(port_, "GET", "/v1/restoration");
  ASSERT_EQ(restoration.status, 200) << restoration.body;
  EXPECT_EQ(Body(restoration)["workspaceStashed"], false);
  EXPECT_EQ(Body(restoration)["workspaceChangesLeft"], true) << restoration.body;
  EXPECT_NE(Body(restoration)["prompt"].get<std::string>().find("WORKSPACE CHANGED"),
            std::string::npos);
  // The previews do not change it either.
  HttpReply preview = HttpCall(port_, "POST", "/v1/restore");
  ASSERT_EQ(preview.status, 200) << preview.body;
  EXPECT_EQ(Body(preview)["workspaceStashed"], false);
  json reply = Request(subjects::CheckpointRestore(kProcAgent), "{}");
  ASSERT_TRUE(reply.is_object());
  EXPECT_EQ(reply["workspaceStashed"], false);
  const long after_restart = agent.Steps();
  ASSERT_TRUE(agent.WaitSteps(after_restart + 5));
  const long steps = agent.Stop();
  ASSERT_GT(steps, after_restart);

  // The tree is exactly what the agent wrote: every line appended, the last note of each slot.
  std::map<std::string, std::string> expected;
  expected["a.txt"] = "a\n";
  for (long i = 0; i < steps; ++i) {
    expected["a.txt"] += "line " + std::to_string(i) + "\n";
    expected["notes/n" + std::to_string(i % 10) + ".txt"] = "note " + std::to_string(i);
  }
  EXPECT_TRUE(Tree(tree_.path()) == expected) << "the working tree was changed under the agent";
  EXPECT_EQ(Stashes(), "");
  EXPECT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
}

TEST_F(SidecarWorkspaceTest, TheAgentsOwnStartStashesUnderTheCheckpointsName) {
  auto sidecar = StartWithCheckpoint();
  std::string checkpoint_id = ListCheckpoints().at(0).checkpoint_id;
  std::ofstream(tree_.File("a.txt"), std::ios::app) << "left by the crashed run\n";
  std::ofstream(tree_.File("scratch.txt")) << "untracked\n";
  HttpReply start = HttpCall(port_, "POST", "/v1/agent-start");
  ASSERT_EQ(start.status, 200) << start.body;
  json r = Body(start);
  EXPECT_EQ(r["workspaceStashed"], true);
  EXPECT_EQ(r["checkpointId"], checkpoint_id);
  EXPECT_NE(r["stashMessage"].get<std::string>().find(checkpoint_id), std::string::npos);
  EXPECT_NE(r["prompt"].get<std::string>().find("WORKSPACE STASHED"), std::string::npos);
  EXPECT_NE(Stashes().find(checkpoint_id), std::string::npos) << Stashes();
  EXPECT_TRUE(Tree(tree_.path()) == (std::map<std::string, std::string>{{"a.txt", "a\n"}}));
  // GET /v1/restoration then serves that result.
  EXPECT_EQ(Body(HttpCall(port_, "GET", "/v1/restoration"))["stashCommit"], r["stashCommit"]);
  EXPECT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
}

}  // namespace
}  // namespace agentckpt::testing
