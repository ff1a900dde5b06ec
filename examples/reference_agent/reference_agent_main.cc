// reference_agent: an agent that uses the agentckpt sidecar exactly as README and
// docs/http-api.md describe, its write tool through the tool-call ledger, and tells a crash
// harness what it did in a probe log (examples/reference_agent/agent_loop.h).
//
//   reference_agent setup --nats URL --agent ID [--stream INBOX] [--ack-wait-ms 3000]
//   reference_agent run   --nats URL --agent ID --sidecar URL --probe-log PATH
//                         [--stream INBOX] [--step-ms 25] [--max-tasks N]
//                         [--precompaction-every 8]
//                         [--crash-at before_begin|after_begin|after_effect|after_end
//                          --crash-on-call N]
//
// `run` stops at the next step boundary on SIGTERM or SIGINT (exit 0).
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>

#include "examples/reference_agent/agent_inbox.h"
#include "examples/reference_agent/agent_loop.h"
#include "nats/nats_connect.h"

namespace {

std::atomic<bool> g_stop{false};

void OnStop(int) { g_stop.store(true); }

int Setup(const std::string& url, const std::string& stream, const std::string& agent,
          int64_t ack_wait_ms) {
  auto connected = agentckpt::ConnectNatsUrl(url);
  if (!connected.ok()) {
    std::fprintf(stderr, "reference_agent setup: connect %s: %s\n", url.c_str(),
                 connected.status().ToString().c_str());
    return 1;
  }
  natsConnection* nc = connected->release();
  agentckpt::Status st = reference_agent::SetupInbox(nc, stream, agent, ack_wait_ms);
  natsConnection_Destroy(nc);
  if (!st.ok()) {
    std::fprintf(stderr, "reference_agent setup: %s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("stream %s, durable consumer %s\n", stream.c_str(), agent.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"reference agent for the agentckpt sidecar"};
  app.require_subcommand(1);
  reference_agent::AgentOptions o;
  int64_t ack_wait_ms = 3000;
  CLI::App* setup = app.add_subcommand("setup", "create the inbox stream and durable consumer");
  setup->add_option("--nats", o.nats_url)->required();
  setup->add_option("--agent", o.agent_id)->required();
  setup->add_option("--stream", o.stream);
  setup->add_option("--ack-wait-ms", ack_wait_ms)->check(CLI::Range(100, 3600000));
  CLI::App* run = app.add_subcommand("run", "work, checkpointed by the sidecar");
  run->add_option("--nats", o.nats_url)->required();
  run->add_option("--agent", o.agent_id)->required();
  run->add_option("--sidecar", o.sidecar_url, "e.g. http://127.0.0.1:8787")->required();
  run->add_option("--probe-log", o.probe_log_path, "where to tell a harness what was done")
      ->required();
  run->add_option("--stream", o.stream);
  run->add_option("--step-ms", o.step_ms)->check(CLI::Range(0, 600000));
  run->add_option("--precompaction-every", o.precompaction_every,
                  "steps between pre_compaction checkpoint requests (0: never)")
      ->check(CLI::Range(0, 1000000));
  run->add_option("--max-tasks", o.max_tasks)->check(CLI::Range(0, 1000000));
  run->add_option("--sidecar-wait-ms", o.sidecar_wait_ms)->check(CLI::Range(100, 3600000));
  run->add_option("--crash-at", o.crash_at, "SIGKILL itself at this point of a write call")
      ->check(CLI::IsMember({"before_begin", "after_begin", "after_effect", "after_end"}));
  run->add_option("--crash-on-call", o.crash_on_call, "... the N-th time a call gets there")
      ->check(CLI::Range(1, 1000000));
  CLI11_PARSE(app, argc, argv);

  if (setup->parsed()) return Setup(o.nats_url, o.stream, o.agent_id, ack_wait_ms);
  struct sigaction sa {};
  sa.sa_handler = OnStop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  reference_agent::ReferenceAgent agent(o, &g_stop);
  return agent.Run();
}
