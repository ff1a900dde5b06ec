// ChildProcess: one program run by the chaos harness (nats-server, the emulator, the sidecar,
// the reference agent), with extra environment variables, stdout and stderr appended to a log
// file, and stopped only by its own pid.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace chaos {

class ChildProcess {
 public:
  // Starts `argv[0]` (a path, or a name looked up in PATH) with `argv`, the harness's environment
  // plus `env`, output to `log_path` (appended). Check running() for success.
  ChildProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               const std::string& log_path);
  // SIGKILLs and reaps the process if it is still running.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // True until the process has been reaped.
  bool running();
  // Sends `sig` (no-op once reaped).
  void Signal(int sig);
  // Waits up to `timeout_ms` for the exit. Returns the exit code, 128+signal when killed by a
  // signal, or -1 if still running at the deadline.
  int Wait(int timeout_ms);
  // The exit code as Wait reports it, -1 while running.
  int exit_code() const { return exit_code_; }

 private:
  bool Reap(bool block);
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int PickFreePort();
// Polls until something accepts TCP connections on 127.0.0.1:port; false after `timeout_ms`.
bool WaitForPort(int port, int timeout_ms);

}  // namespace chaos
