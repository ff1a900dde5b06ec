// Test helpers for the `agentckpt` binary: start it as a child process with a given environment,
// talk HTTP to it, and stop it by its pid.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>

#include "tests/support/temp_dir.h"

namespace agentckpt::testing {

struct HttpReply {
  int status = 0;  // 0 when the request could not be made
  std::string body;
  std::map<std::string, std::string> headers;
};

// One HTTP request to 127.0.0.1:port, with `headers` added. Never throws.
HttpReply HttpCall(int port, const std::string& method, const std::string& path,
                   const std::string& body = "", const std::string& content_type = "",
                   const std::map<std::string, std::string>& headers = {});

// The reference fixture's activeTask/contextSummary/workspace as a PUT /v1/context body.
std::string FixtureContextBody(const std::string& fixture_name);

class SidecarProcess {
 public:
  // Runs $AGENTCKPT_BIN (default: this build tree's bin/agentckpt) run with `env` added to the
  // environment (and NATS_URL etc. as given); stdout and stderr go to files in `dir`. Does not
  // wait; see WaitHealthy.
  SidecarProcess(const std::map<std::string, std::string>& env, const std::string& dir);
  ~SidecarProcess();
  SidecarProcess(const SidecarProcess&) = delete;
  SidecarProcess& operator=(const SidecarProcess&) = delete;

  // Polls GET /healthz until 200 (true) or the process exits / `timeout_ms` passes (false).
  // The default allows for a sanitizer build on a busy machine (about 1 s to start there).
  bool WaitHealthy(int port, int timeout_ms = 30000);
  // Sends `sig` and waits up to `timeout_ms` for the exit; returns the exit code, or -1 if it
  // did not exit in time (it is then SIGKILLed), or 128+signal if killed by a signal.
  int Signal(int sig, int timeout_ms = 10000);
  // Waits for exit without sending anything; -1 on timeout.
  int Wait(int timeout_ms);
  // SIGKILL and reap.
  void Kill();
  pid_t pid() const { return pid_; }
  std::string Stdout() const;
  std::string Stderr() const;
  // For a failure message: whether the process still runs (or its exit status), then its
  // stdout (the JSON log: how far start-up got and how long each step took) and stderr.
  std::string Describe();

 private:
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
};

}  // namespace agentckpt::testing
