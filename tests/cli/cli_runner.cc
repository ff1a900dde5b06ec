#include "tests/cli/cli_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/child_spawn.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

nlohmann::json CliResult::Json() const { return nlohmann::json::parse(out, nullptr, false); }

CliResult RunCli(const std::vector<std::string>& args,
                 const std::map<std::string, std::string>& env, int timeout_ms,
                 bool stderr_on_terminal) {
  int master = -1;
  std::string slave_name;
  if (stderr_on_terminal) {
    master = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
      std::perror("posix_openpt");
      std::abort();
    }
    slave_name = ::ptsname(master);
  }
  TempDir dir;
  const std::string out_path = dir.File("stdout");
  const std::string err_path = dir.File("stderr");
  const char* bin = std::getenv("AGENTCKPT_BIN");
  std::string binary = bin != nullptr ? bin : "agentckpt";
  std::vector<std::string> argv_store = {binary};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  ChildSpec spec;
  // execv semantics: a bare name is a file in the working directory, not looked up on PATH.
  spec.argv = std::move(argv_store);
  if (spec.argv[0].find('/') == std::string::npos) spec.argv[0] = "./" + spec.argv[0];
  spec.unset_env = {"CKPT_STORE", "NATS_URL", "AGENT_ID", "JS_STREAM", "JS_CONSUMER"};
  spec.set_env = env;
  spec.stdout_path = out_path;
  spec.stderr_path = stderr_on_terminal ? slave_name : err_path;
  pid_t pid = SpawnChild(spec);
  if (pid < 0) std::abort();
  CliResult result;
  std::string from_terminal;
  auto drain_terminal = [&] {
    if (master < 0) return;
    pollfd p{master, POLLIN, 0};
    char buf[4096];
    while (::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0) {
      ssize_t n = ::read(master, buf, sizeof(buf));
      if (n <= 0) break;
      from_terminal.append(buf, static_cast<size_t>(n));
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      result.exit_code = -1;
      break;
    }
    drain_terminal();  // a full terminal buffer would block the child
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.out = ReadAll(out_path);
  if (master >= 0) {
    drain_terminal();
    ::close(master);
    result.err = from_terminal;
  } else {
    result.err = ReadAll(err_path);
  }
  return result;
}

std::string Describe(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

}  // namespace agentckpt::testing
