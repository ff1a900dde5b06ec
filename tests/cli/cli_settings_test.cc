// The settings `agentckpt run` shares with the other subcommands are read by one parser
// (sidecar/config.h): the same variable with the same bad value gives the same message and exit
// code 2 in every subcommand that takes it. The real binary, run as a subprocess; every case is
// refused before anything is opened or connected.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/cli/cli_runner.h"

namespace agentckpt::testing {
namespace {

struct Refusal {
  int exit_code;
  std::string message;  // stderr without "agentckpt <subcommand>: " and the newline
};

Refusal RunRefused(const std::string& subcommand, const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env) {
  std::vector<std::string> all = {subcommand};
  all.insert(all.end(), args.begin(), args.end());
  CliResult r = RunCli(all, env);
  std::string err = r.err;
  while (!err.empty() && err.back() == '\n') err.pop_back();
  const std::string prefix = "agentckpt " + subcommand + ": ";
  EXPECT_EQ(err.rfind(prefix, 0), 0u) << Describe(r);
  return {r.exit_code, err.substr(std::min(err.size(), prefix.size()))};
}

// Runs each subcommand (with its arguments) under `env` and checks they all refuse with exit 2
// and one message, which names `variable`.
void ExpectSameRefusal(const std::string& variable, const std::map<std::string, std::string>& env,
                       const std::map<std::string, std::vector<std::string>>& subcommands) {
  std::string first_message, first_subcommand;
  for (const auto& [subcommand, args] : subcommands) {
    Refusal r = RunRefused(subcommand, args, env);
    EXPECT_EQ(r.exit_code, 2) << subcommand << ": " << r.message;
    EXPECT_EQ(r.message.rfind(variable + " (--", 0), 0u) << subcommand << ": " << r.message;
    if (first_subcommand.empty()) {
      first_subcommand = subcommand;
      first_message = r.message;
    } else {
      EXPECT_EQ(r.message, first_message) << subcommand << " and " << first_subcommand;
    }
  }
}

const std::map<std::string, std::vector<std::string>> kRunAndRestore = {{"run", {}},
                                                                        {"restore", {"--dry-run"}}};

TEST(CliSettingsTest, ABadNumberIsRefusedAlikeByRunAndRestore) {
  for (const auto& [variable, value] :
       std::vector<std::pair<std::string, std::string>>{{"CKPT_REPLAY_MAX", "abc"},
                                                        {"CKPT_REPLAY_MAX", "10001"},
                                                        {"CKPT_PROMPT_MAX_TOKENS", "10"},
                                                        {"CKPT_PROMPT_MAX_TOKENS", "4000x"},
                                                        {"CKPT_STALE_AFTER_S", "0"}}) {
    SCOPED_TRACE(variable + "=" + value);
    ExpectSameRefusal(variable, {{"AGENT_ID", "agent-a"}, {variable, value}}, kRunAndRestore);
  }
}

TEST(CliSettingsTest, AMissingWorkspaceOrPatternsFileIsRefusedAlikeByRunAndRestore) {
  ExpectSameRefusal("WORKSPACE_DIR",
                    {{"AGENT_ID", "agent-a"}, {"WORKSPACE_DIR", "/nonexistent/workspace"}},
                    kRunAndRestore);
  ExpectSameRefusal("CKPT_REDACT_PATTERNS",
                    {{"AGENT_ID", "agent-a"}, {"CKPT_REDACT_PATTERNS", "/nonexistent/patterns"}},
                    kRunAndRestore);
}

TEST(CliSettingsTest, ABadAgentIdIsRefusedAlikeByEverySubcommandThatTakesIt) {
  ExpectSameRefusal("AGENT_ID", {{"AGENT_ID", "bad id!"}},
                    {{"run", {}},
                     {"restore", {"--dry-run"}},
                     {"create", {}},
                     {"setup-stream", {"--stream", "S", "--consumer", "C"}}});
}

}  // namespace
}  // namespace agentckpt::testing
