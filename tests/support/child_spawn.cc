#include "tests/support/child_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

extern char** environ;

namespace agentckpt::testing {
namespace {

// The program's path: as given when it names a path, else the first executable on PATH.
std::string ResolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

int OpenOutput(const std::string& path, bool append) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) std::perror(("SpawnChild: open " + path).c_str());
  return fd;
}

}  // namespace

pid_t SpawnChild(const ChildSpec& spec) {
  if (spec.argv.empty()) return -1;
  const std::string program = ResolveProgram(spec.argv[0]);
  if (program.empty()) {
    std::fprintf(stderr, "SpawnChild: %s not found on PATH\n", spec.argv[0].c_str());
    return -1;
  }
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    if (spec.set_env.count(name) != 0) continue;
    if (std::find(spec.unset_env.begin(), spec.unset_env.end(), name) != spec.unset_env.end()) {
      continue;
    }
    env.push_back(std::move(entry));
  }
  for (const auto& [k, v] : spec.set_env) env.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_fd = -1, err_fd = -1;
  if (!spec.stdout_path.empty() && (out_fd = OpenOutput(spec.stdout_path, spec.append)) < 0) {
    return -1;
  }
  if (!spec.stderr_path.empty()) {
    if (spec.stderr_path == spec.stdout_path) {
      err_fd = out_fd;
    } else if ((err_fd = OpenOutput(spec.stderr_path, spec.append)) < 0) {
      if (out_fd >= 0) ::close(out_fd);
      return -1;
    }
  }
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();

  std::fflush(nullptr);  // nothing buffered may be written twice
  pid_t pid = ::fork();
  if (pid == 0) {
    // Async-signal-safe calls only (see the header).
    if (out_fd >= 0) ::dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0) ::dup2(err_fd, STDERR_FILENO);
    if (cwd != nullptr && ::chdir(cwd) != 0) ::_exit(126);
    ::execve(program.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  if (pid < 0) std::perror("SpawnChild: fork");
  if (out_fd >= 0) ::close(out_fd);
  if (err_fd >= 0 && err_fd != out_fd) ::close(err_fd);
  return pid;
}

void StopChild(pid_t* pid) {
  if (*pid <= 0) return;
  ::kill(*pid, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    if (::waitpid(*pid, nullptr, WNOHANG) == *pid) {
      *pid = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(*pid, SIGKILL);
  ::waitpid(*pid, nullptr, 0);
  *pid = -1;
}

}  // namespace agentckpt::testing
