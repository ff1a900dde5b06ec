// ChaosRun: starting the run's processes (nats-server or the 3-node cluster, the Firestore
// emulator, the sidecar, the reference agent) and the settings they get.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "bench/chaos/chaos_run.h"
#include "bench/chaos/chaos_run_internal.h"
#include "examples/reference_agent/agent_inbox.h"
#include "examples/reference_agent/sidecar_client.h"
#include "nats/nats_connect.h"

namespace chaos {

using agentckpt::Status;

std::string ChaosRun::NatsUrl() const {
  return cluster() ? nodes_->url() : "nats://127.0.0.1:" + std::to_string(nats_port_);
}

std::vector<std::string> ChaosRun::NatsUrls() const {
  if (!cluster()) return {NatsUrl()};
  std::vector<std::string> urls;
  for (int i = 0; i < nodes_->size(); ++i) urls.push_back(nodes_->url(i));
  return urls;
}

std::string ChaosRun::AgentNatsUrl() {
  if (!cluster()) return NatsUrl();
  std::vector<int> up;
  for (int i = 0; i < nodes_->size(); ++i) {
    if (nodes_->up(i)) up.push_back(i);
  }
  if (up.empty()) return nodes_->url(0);
  return nodes_->url(up[node_rng_() % up.size()]);
}

std::string ChaosRun::LogPath(const std::string& who, int incarnation) const {
  return work_ + "/logs/" + who + "-" + std::to_string(incarnation) + ".log";
}

std::string ChaosRun::LastLogLine(const std::string& who, int incarnation,
                                  const std::string& marker) const {
  std::ifstream log(LogPath(who, incarnation));
  std::string line, last;
  while (std::getline(log, line)) {
    if (!line.empty() && line.find(marker) != std::string::npos) last = line;
  }
  return last;
}

std::map<std::string, std::string> ChaosRun::SidecarEnv() const {
  std::map<std::string, std::string> env = {
      {"AGENT_ID", o_.agent_id},
      {"NATS_URL", NatsUrl()},
      {"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(http_port_)},
      {"CKPT_PERIOD_S", std::to_string(o_.period_s)},
      {"CKPT_DURABILITY", o_.durability},
      {"JS_STREAM", kStream},
      {"JS_CONSUMER", o_.agent_id},
      {"CKPT_NATS_RECONNECT_WAIT_MS", "100"}};
  if (o_.lease_ttl_s > 0) env["CKPT_LEASE_TTL_S"] = std::to_string(o_.lease_ttl_s);
  if (o_.store == "firestore") {
    env["CKPT_STORE"] = "firestore://projects/chaos/databases/(default)";
    env["FIRESTORE_EMULATOR_HOST"] = "127.0.0.1:" + std::to_string(emulator_port_);
  } else if (cluster()) {
    // No hosts: the store uses NATS_URL, every server of the cluster.
    env["CKPT_STORE"] = std::string("jetstream:///") + kStorePrefix + "?replicas=3&create=1";
  } else {
    env["CKPT_STORE"] = "sqlite://" + work_ + "/checkpoints.db";
  }
  return env;
}

Status ChaosRun::Setup() {
  ::mkdir(o_.out_dir.c_str(), 0755);
  ::mkdir(work_.c_str(), 0755);
  ::mkdir((work_ + "/logs").c_str(), 0755);
  ::mkdir((work_ + "/jetstream").c_str(), 0755);
  std::remove((work_ + "/probe.jsonl").c_str());
  events_log_.open(work_ + "/events.jsonl", std::ios::trunc);
  std::remove((work_ + "/checkpoints.db").c_str());
  if (cluster()) {
    Status st = SetupCluster();
    if (!st.ok()) return st;
  } else {
    nats_port_ = PickFreePort();
    nats_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{o_.nats_server, "-js", "-a", "127.0.0.1", "-p",
                                 std::to_string(nats_port_), "-sd", work_ + "/jetstream"},
        std::map<std::string, std::string>{}, work_ + "/logs/nats.log");
    if (!WaitForPort(nats_port_, 10000)) return agentckpt::UnavailableError("nats-server not up");
  }
  if (o_.store == "firestore") {
    emulator_port_ = PickFreePort();
    std::vector<std::string> argv = {o_.bin_dir + "/firestore_emulator",
                                     "--host",
                                     "127.0.0.1",
                                     "--port",
                                     std::to_string(emulator_port_),
                                     "--seed",
                                     std::to_string(o_.seed)};
    if (o_.faults) {
      for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
               {"--error-rate", std::to_string(o_.fault_error_rate)},
               {"--error-status", "503"},
               {"--delay-rate", std::to_string(o_.fault_delay_rate)},
               {"--delay-ms", std::to_string(o_.fault_delay_ms)},
               {"--drop-rate", std::to_string(o_.fault_drop_rate)}}) {
        argv.push_back(flag);
        argv.push_back(value);
      }
    }
    emulator_ = std::make_unique<ChildProcess>(argv, std::map<std::string, std::string>{},
                                               work_ + "/logs/emulator.log");
    if (!WaitForPort(emulator_port_, 10000)) return agentckpt::UnavailableError("emulator not up");
  }
  Status st = obs_.Start(NatsUrls(), NatsUrl(), o_.agent_id, kStream);
  if (!st.ok()) return st;
  st = sink_.Start(NatsUrls(), o_.agent_id);
  if (!st.ok()) return st;
  {
    auto connected = ConnectHarness(NatsUrl(), /*pinned=*/false);
    if (!connected.ok()) return agentckpt::UnavailableError("connect for setup");
    natsConnection* nc = *connected;
    // On the cluster the stream exists already (R3, SetupCluster): this adds the consumer,
    // which takes the stream's replicas.
    st = reference_agent::SetupInbox(nc, kStream, o_.agent_id, 3000);
    if (st.ok() && cluster()) {
      jsCtx* js = nullptr;
      jsErrCode jerr = static_cast<jsErrCode>(0);
      natsStatus s = natsConnection_JetStream(&js, nc, nullptr);
      // Right after the creation a new consumer's info may not yet list exactly its two
      // followers (a sanitizer run on a busy machine once saw three). Read it again until it
      // does (bounded: 100 reads, 50 ms apart).
      int peers = -1;
      for (int attempt = 0; s == NATS_OK && peers != 2 && attempt < 100; ++attempt) {
        if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        jsConsumerInfo* ci = nullptr;
        s = js_GetConsumerInfo(&ci, js, kStream, o_.agent_id.c_str(), nullptr, &jerr);
        peers = s == NATS_OK && ci->Cluster != nullptr ? ci->Cluster->ReplicasLen : -1;
        jsConsumerInfo_Destroy(ci);
      }
      jsCtx_Destroy(js);
      if (peers != 2) {
        st = agentckpt::FailedPreconditionError("the inbox consumer is not R3 (" +
                                                std::to_string(peers) +
                                                " replicas besides its leader)");
      }
    }
    natsConnection_Destroy(nc);
    if (!st.ok()) return st;
  }
  tail_ = std::make_unique<reference_agent::ProbeLogTail>(work_ + "/probe.jsonl");
  http_port_ = PickFreePort();
  st = StartSidecar();
  if (!st.ok()) return st;
  reference_agent::SidecarClient client("http://127.0.0.1:" + std::to_string(http_port_),
                                        std::chrono::milliseconds(2000));
  for (int i = 0; i < 1000 && client.Call("GET", "/healthz").status != 200; ++i) {
    if (!sidecar_->running()) {
      // E.g. a setting it refuses: its last log line says which.
      return agentckpt::UnavailableError("the sidecar exited at start with " +
                                         std::to_string(sidecar_->exit_code()) + ": " +
                                         LastLogLine("sidecar", sidecar_inc_, ""));
    }
    SleepMs(10);
  }
  st = StartAgent();
  if (!st.ok()) return st;
  Resume r;
  if (!WaitResume(kRestoreWaitMs, &r)) return agentckpt::UnavailableError("agent did not start");
  if (obs_.WaitFor(0, ".checkpoint.created", 10000) < 0) {
    return agentckpt::UnavailableError("no checkpoint.created within 10 s of the first task");
  }
  return agentckpt::OkStatus();
}

Status ChaosRun::SetupCluster() {
  const std::string prefix = kStorePrefix;
  nodes_ = std::make_unique<NodeChaos>(
      prefix + "_AGENTS",
      std::vector<std::string>{prefix + "_AGENTS", prefix + "_CKPT", prefix + "_JOURNAL", kStream},
      kStream, o_.agent_id);
  nodes_->Start();  // aborts with the servers' logs if the cluster cannot start
  // The inbox stream as SetupInbox makes it, with three replicas, so that losing a server loses
  // no inbox message and no consumer state (SetupInbox adds the consumer, which inherits them).
  {
    auto connected = ConnectHarness(NatsUrl(), /*pinned=*/false);
    if (!connected.ok()) return connected.status();
    natsConnection* nc = *connected;
    jsCtx* js = nullptr;
    natsStatus s = natsConnection_JetStream(&js, nc, nullptr);
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = kStream;
    const char* subjects[] = {"inbox.>"};
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;
    sc.Replicas = 3;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    if (s == NATS_OK) {
      jsStreamInfo* si = nullptr;
      s = js_AddStream(&si, js, &sc, nullptr, &jerr);
      jsStreamInfo_Destroy(si);
    }
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    if (s != NATS_OK) {
      return agentckpt::UnavailableError(std::string("create the R3 inbox stream: ") +
                                         natsStatus_GetText(s) + " (JetStream error " +
                                         std::to_string(jerr) + ")");
    }
  }
  // The store's three streams, R3, as an operator provisions them.
  ChildProcess setup({o_.bin_dir + "/agentckpt", "setup-store", "--store",
                      std::string("jetstream:///") + prefix, "--replicas", "3"},
                     {{"NATS_URL", NatsUrl()}}, work_ + "/logs/setup-store.log");
  const int code = setup.Wait(60000);
  if (code != 0) {
    return agentckpt::UnavailableError("agentckpt setup-store exited with " + std::to_string(code) +
                                       " (" + work_ + "/logs/setup-store.log)");
  }
  return agentckpt::OkStatus();
}

Status ChaosRun::StartSidecar() {
  ++sidecar_inc_;
  sidecar_ =
      std::make_unique<ChildProcess>(std::vector<std::string>{o_.bin_dir + "/agentckpt", "run"},
                                     SidecarEnv(), LogPath("sidecar", sidecar_inc_));
  return sidecar_->running() ? agentckpt::OkStatus()
                             : agentckpt::InternalError("sidecar did not start");
}

Status ChaosRun::StartAgent() {
  ++agent_inc_;
  resume_by_pid_.clear();  // pids are reused: only a resume line after this start counts
  std::vector<std::string> argv = {o_.bin_dir + "/reference_agent",
                                   "run",
                                   "--nats",
                                   AgentNatsUrl(),
                                   "--agent",
                                   o_.agent_id,
                                   "--sidecar",
                                   "http://127.0.0.1:" + std::to_string(http_port_),
                                   "--probe-log",
                                   work_ + "/probe.jsonl",
                                   "--step-ms",
                                   std::to_string(o_.step_ms),
                                   "--precompaction-every",
                                   std::to_string(o_.precompaction_every)};
  // Every second start (SIGTERM-only runs aside) the agent is told to crash at one of the four
  // points around a write call, in turn, the first or second time a call gets there.
  static const char* kPoints[] = {"before_begin", "after_begin", "after_effect", "after_end"};
  agent_crash_point_.clear();
  if (o_.injected_crashes && o_.mode != "sigterm" && agent_inc_ % 2 == 0) {
    agent_crash_point_ = kPoints[crash_starts_++ % 4];
    agent_crash_call_ = 1 + static_cast<int>(rng_() % 2);
    argv.insert(argv.end(), {"--crash-at", agent_crash_point_, "--crash-on-call",
                             std::to_string(agent_crash_call_)});
  }
  agent_ = std::make_unique<ChildProcess>(argv, std::map<std::string, std::string>{},
                                          LogPath("agent", agent_inc_));
  return agent_->running() ? agentckpt::OkStatus()
                           : agentckpt::InternalError("agent did not start");
}
}  // namespace chaos
