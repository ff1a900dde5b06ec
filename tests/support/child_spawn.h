// Starting a child process from a multithreaded test process.
//
// A test process has threads of its own (nats.c, cpprestsdk), and fork() copies only the calling
// thread: a lock another thread held at that moment (malloc's, the environment's, stdio's) stays
// locked in the child forever. A child that allocates, calls setenv or freopen before exec can
// therefore hang without a word. SpawnChild prepares everything before fork() and makes only
// async-signal-safe calls in the child (dup2, chdir, execve, _exit).
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace agentckpt::testing {

struct ChildSpec {
  // argv[0] is the program: a path, or a name looked up on PATH (in the parent).
  std::vector<std::string> argv;
  // Set in (or replaced in) the child's environment, which is otherwise this process's.
  std::map<std::string, std::string> set_env;
  // Removed from the child's environment.
  std::vector<std::string> unset_env;
  // The child's working directory; empty: this process's.
  std::string cwd;
  // Files for the child's stdout and stderr (the same path for both: one file); empty:
  // inherited. Created if missing; truncated unless `append`.
  std::string stdout_path;
  std::string stderr_path;
  bool append = false;
};

// Forks and execs `spec`. Returns the child's pid, or -1 if the program is not found, an output
// file cannot be opened or fork fails (with a perror line). A child whose exec fails exits 127.
// Thread-safe.
pid_t SpawnChild(const ChildSpec& spec);

// Stops the child *pid: SIGTERM, up to 2 s for it to exit, then SIGKILL; reaps it and sets *pid
// to -1. Does nothing when *pid <= 0.
void StopChild(pid_t* pid);

}  // namespace agentckpt::testing
