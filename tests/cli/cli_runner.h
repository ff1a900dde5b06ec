// Runs the real `agentckpt` binary ($AGENTCKPT_BIN) as a child process for CLI tests: arguments,
// extra environment, stdout and stderr captured to files, exit code, bounded wait, stopped by
// pid (SIGKILL) if it overruns.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace agentckpt::testing {

struct CliResult {
  int exit_code = -1;  // 128+signal if killed; -1 if it had to be killed for overrunning
  std::string out;
  std::string err;
  // stdout parsed as JSON (discarded value if it does not parse).
  nlohmann::json Json() const;
};

// Runs `agentckpt args...` with `env` added to the environment (and CKPT_STORE, NATS_URL,
// AGENT_ID, JS_STREAM and JS_CONSUMER removed unless given), waiting at most `timeout_ms`. With
// `stderr_on_terminal`, the child's stderr is a pseudo-terminal (what it wrote is in `err`).
CliResult RunCli(const std::vector<std::string>& args,
                 const std::map<std::string, std::string>& env = {}, int timeout_ms = 30000,
                 bool stderr_on_terminal = false);

// "exit N, stdout: ..., stderr: ..." for assertion messages.
std::string Describe(const CliResult& r);

}  // namespace agentckpt::testing
