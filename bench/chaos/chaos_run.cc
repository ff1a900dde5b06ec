#include "bench/chaos/chaos_run.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "bench/chaos/chaos_summary.h"
#include "examples/reference_agent/agent_inbox.h"
#include "examples/reference_agent/sidecar_client.h"
#include "nats/nats_connect.h"
#include "store/checkpoint_store.h"

namespace chaos {

using agentckpt::Status;
using nlohmann::json;
using reference_agent::WallMillis;

namespace {

constexpr int kRestoreWaitMs = 30000;
constexpr char kStream[] = "INBOX";
// The JetStream store's stream prefix (streams CHAOS_AGENTS, CHAOS_CKPT, CHAOS_JOURNAL).
constexpr char kStorePrefix[] = "CHAOS";
// How long a feed is sent again, and a consumer snapshot asked again, while a stream of the
// cluster elects a leader (4-8 s on nats-server 2.9).
constexpr int kNatsRetryMs = 30000;
// A node kill waits this long for the previous one's server to be back and healthy.
constexpr int kQuietWaitMs = 180000;

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void AddNote(CycleRow* row, const std::string& note) {
  row->note += (row->note.empty() ? "" : "; ") + note;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

ChaosRun::ChaosRun(ChaosOptions options)
    : o_(std::move(options)), rng_(o_.seed), node_rng_(o_.seed ^ 0x6e6f64656b696c6cULL) {
  work_ = o_.out_dir + "/work";
  run_id_ = std::to_string(o_.seed) + "-" + std::to_string(static_cast<int64_t>(WallMillis()));
}

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
      jsConsumerInfo* ci = nullptr;
      jsErrCode jerr = static_cast<jsErrCode>(0);
      natsStatus s = natsConnection_JetStream(&js, nc, nullptr);
      if (s == NATS_OK) {
        s = js_GetConsumerInfo(&ci, js, kStream, o_.agent_id.c_str(), nullptr, &jerr);
      }
      const int peers = s == NATS_OK && ci->Cluster != nullptr ? ci->Cluster->ReplicasLen : -1;
      jsConsumerInfo_Destroy(ci);
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
      std::ifstream log(LogPath("sidecar", sidecar_inc_));
      std::string line, last;
      while (std::getline(log, line)) {
        if (!line.empty()) last = line;
      }
      return agentckpt::UnavailableError("the sidecar exited at start with " +
                                         std::to_string(sidecar_->exit_code()) + ": " + last);
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

void ChaosRun::PlanNodeKill(int n, CycleRow* row) {
  node_phase_.clear();
  // Every draw is made whatever the outcome, so that a seed gives the same plan.
  const bool kill = node_rng_() % 2 == 0;
  const int victim = static_cast<int>(node_rng_() % 3);
  const int fallback = static_cast<int>(node_rng_() % 3);
  const bool at_restore = node_rng_() % 2 == 0;
  const double work_delay =
      static_cast<double>(node_rng_() % static_cast<uint64_t>(o_.max_run_ms + 1));
  // From the restart: a restore takes 100-400 ms with every server up, so most of these kills
  // land in it (the others in what follows, up to the cycle's end).
  const double restore_delay = static_cast<double>(node_rng_() % 401);
  const int down_ms =
      o_.node_down_min_ms +
      static_cast<int>(node_rng_() %
                       static_cast<uint64_t>(o_.node_down_max_ms - o_.node_down_min_ms + 1));
  if (!kill) return;
  // At most one server down: the previous kill's server is back and every stream and the
  // inbox consumer have their three replicas again (a previous health wait that failed stops
  // the node kills altogether, rather than risk the quorum).
  Status quiet = nodes_->WaitQuiet(kQuietWaitMs);
  std::vector<NodeKill> kills = nodes_->kills();
  if (!quiet.ok() || (!kills.empty() && !kills.back().healthy)) {
    AddNote(row, "node kill skipped: " + (quiet.ok()
                                              ? "the cluster did not heal after " +
                                                    kills.back().Name() + ": " + kills.back().error
                                              : quiet.ToString()));
    return;
  }
  ++node_kills_planned_;
  node_victim_ = node_kills_planned_ % 3 == 0 ? -1 : victim;  // every third: the leader
  node_fallback_ = fallback;
  node_down_ms_ = down_ms;
  if (at_restore) {
    node_phase_ = "restore";
    node_delay_ms_ = restore_delay;  // planned at the restart (ChaosRun::Cycle)
  } else {
    node_phase_ = "work";
    nodes_->PlanKill(n, "work", work_delay, node_victim_, node_fallback_, node_down_ms_);
  }
}

void ChaosRun::EndNodeKills(int n, CycleRow* row) {
  nodes_->FireKillNow();           // a kill planned beyond the cycle happens at its end
  nodes_->RestartKilledBefore(n);  // a server killed in the cycle before is back by now
  row->nodes_down = nodes_->DownDuring(restart_t0_, restore_end_t_);
  const std::vector<NodeKill> kills = nodes_->kills();
  for (size_t i = 0; i < kills.size(); ++i) {
    const NodeKill& k = kills[i];
    if (k.cycle == n) {
      row->node_kill = k.Name();
      row->node_kill_leader = k.was_leader;
      row->node_kill_phase = k.phase;
    }
    // Each restart is reported once, by the first cycle that ends after it.
    if (k.restart_t > 0 && i >= node_restarts_reported_) {
      row->node_restart = k.Name();
      node_restarts_reported_ = i + 1;
    }
  }
}

void ChaosRun::KeepNatsLogs(int n) {
  constexpr std::streamoff kTail = 256 * 1024;
  for (int i = 0; i < nodes_->size(); ++i) {
    std::ifstream in(nodes_->log_path(i), std::ios::binary | std::ios::ate);
    const std::streamoff size = in.tellg();
    in.seekg(std::max<std::streamoff>(0, size - kTail));
    std::ofstream out(work_ + "/logs/nats-n" + std::to_string(i + 1) + "-cycle-" +
                      std::to_string(n) + ".log");
    out << in.rdbuf();
  }
}

void ChaosRun::KeepLogsOf(int sidecar_incarnation, int agent_incarnation) {
  keep_logs_.insert(LogPath("sidecar", sidecar_incarnation));
  keep_logs_.insert(LogPath("agent", agent_incarnation));
}

void ChaosRun::AuditStore(CycleRow* row) {
  row->listed_unreadable = -1;
  if (audit_store_ == nullptr) {
    // Every server by name (the harness has no NATS_URL); a short retry: a cycle that ends in a
    // leader election is audited at the next one.
    std::string hosts;
    for (const std::string& url : NatsUrls()) {
      hosts += (hosts.empty() ? "" : ",") + url.substr(url.find("://") + 3);
    }
    auto opened = agentckpt::OpenStore("jetstream://" + hosts + "/" + kStorePrefix +
                                       "?timeout_ms=2000&retry_ms=3000");
    if (!opened.ok()) return;
    audit_store_ = std::move(opened).value();
  }
  auto listed = audit_store_->List(o_.agent_id, 100000);
  if (!listed.ok()) return;
  int unreadable = 0;
  std::vector<std::string> fresh;
  std::string first_error;
  for (const agentckpt::CheckpointInfo& info : *listed) {
    auto cp = audit_store_->GetById(o_.agent_id, info.checkpoint_id);
    if (cp.ok()) continue;
    if (cp.status().code() == agentckpt::StatusCode::kUnavailable) return;  // not audited
    // Pruned since the list was read (GetById reads the record again): no longer listed.
    if (cp.status().code() == agentckpt::StatusCode::kNotFound) continue;
    ++unreadable;
    if (unreadable_ids_.insert(info.checkpoint_id).second) {
      fresh.push_back(std::to_string(info.sequence_number));
      if (first_error.empty()) first_error = cp.status().ToString();
    }
  }
  row->listed_unreadable = unreadable;
  if (!fresh.empty()) {
    std::string seqs;
    for (const std::string& s : fresh) seqs += (seqs.empty() ? "" : " ") + s;
    AddNote(row, std::to_string(fresh.size()) +
                     " checkpoints the agent record lists cannot be "
                     "read back any more (sequences " +
                     seqs + "; of " + std::to_string(listed->size()) + " listed): " + first_error);
  }
}

json ChaosRun::NodeKillSummary() const {
  int targeted = 0, hit = 0, unknown = 0, still_down = 0, unhealthy = 0;
  std::map<std::string, int> by_node, by_phase;
  std::vector<double> down_ms, heal_ms;
  json errors = json::array();
  std::ofstream log(work_ + "/node-kills.jsonl", std::ios::trunc);
  for (const NodeKill& k : nodes_->kills()) {
    log << json{{"cycle", k.cycle},          {"phase", k.phase},
                {"node", k.Name()},          {"targetedLeader", k.targeted_leader},
                {"wasLeader", k.was_leader}, {"leaderKnown", k.leader_known},
                {"killT", k.kill_t},         {"restartT", k.restart_t},
                {"healthyT", k.healthy_t},   {"healthy", k.healthy},
                {"error", k.error}}
               .dump()
        << "\n";
    targeted += k.targeted_leader ? 1 : 0;
    hit += k.was_leader ? 1 : 0;
    unknown += k.leader_known ? 0 : 1;
    ++by_node[k.Name()];
    ++by_phase[k.phase];
    if (k.restart_t > 0) {
      down_ms.push_back(k.restart_t - k.kill_t);
    } else {
      ++still_down;
    }
    if (k.healthy_t > 0 && k.healthy) heal_ms.push_back(k.healthy_t - k.restart_t);
    if (k.healthy_t > 0 && !k.healthy) ++unhealthy;
    if (!k.error.empty())
      errors.push_back("cycle " + std::to_string(k.cycle) + " " + k.Name() + ": " + k.error);
  }
  return {{"total", nodes_->kills().size()},
          {"targetedLeader", targeted},
          {"leaderOfAgentRecords", hit},
          {"leaderUnknown", unknown},
          {"byNode", by_node},
          {"byPhase", by_phase},
          {"downMs", Distribution(down_ms)},
          {"healthyAfterRestartMs", Distribution(heal_ms)},
          {"healthWaitsFailed", unhealthy},
          {"stillDown", still_down},
          {"errors", errors}};
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

void ChaosRun::DrainProbeLog() {
  // The sink's executions are taken first: every probe line written before one of them (an
  // "ended" line, above all) is then in the file when it is read below.
  const std::vector<EffectSink::Execution> executions = sink_.TakeNew();
  for (const EffectSink::Execution& e : executions) handled_seqs_.insert(e.seq);
  for (const json& line : tail_->ReadNew()) {
    std::string k = line.value("k", "");
    double t = line.value("t", 0.0);
    const std::string key = line.value("key", "");
    if (k == "crash") {
      crashes_.push_back(Mark{t, key, line.value("point", "")});
    } else if (k == "unknown" || k == "ended") {
      key_marks_.push_back(Mark{t, key, k});
      if (k == "ended") ended_t_.emplace(key, t);
    } else if (k == "work") {
      int64_t g = line.value("global", int64_t{0});
      step_time_[g] = t;
      last_global_ = g;
      last_global_t_ = t;
    } else if (k == "ack") {
      acks_.push_back(Ack{t, line.value("journalSequence", int64_t{-1}),
                          line.value("global", int64_t{0}), line.value("what", "")});
    } else if (k == "resume") {
      Resume r;
      r.line = line;
      int64_t g = line.value("global", int64_t{0});
      auto it = step_time_.find(g);
      r.restored_step_t = it == step_time_.end() ? 0 : it->second;
      r.last_global_before = last_global_;
      r.last_t_before = last_global_t_;
      uint64_t floor = line.value("ackFloor", uint64_t{0});
      r.msgs_after_checkpoint =
          static_cast<int>(std::distance(handled_seqs_.upper_bound(floor), handled_seqs_.end()));
      resume_by_pid_[line.value("pid", int64_t{0})] = r;
      last_global_ = g;  // the new incarnation continues from here
      last_global_t_ = t;
    }
  }
  for (const EffectSink::Execution& e : executions) {
    ++sink_executions_;
    if (e.count > 1) {
      ++duplicates_pending_;
      ++duplicates_total_;
    }
    auto ended = ended_t_.find(e.key);
    if (ended != ended_t_.end() && ended->second < e.t) ++reexecuted_completed_;
  }
}

bool ChaosRun::WaitResume(int timeout_ms, Resume* out) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    DrainProbeLog();
    auto it = resume_by_pid_.find(agent_->pid());
    if (it != resume_by_pid_.end()) {
      *out = it->second;
      return true;
    }
    if (!agent_->running() || std::chrono::steady_clock::now() > deadline) return false;
    SleepMs(2);
  }
}

void ChaosRun::ScanEvents() {
  DrainProbeLog();
  size_t n = obs_.size();
  for (; scanned_ < n; ++scanned_) {
    Observed e = obs_.at(scanned_);
    if (events_log_.is_open()) {
      events_log_ << json{{"t", e.t}, {"subject", e.subject}, {"data", e.data}}.dump(
                         -1, ' ', false, json::error_handler_t::replace)
                  << "\n";
    }
    if (EndsWith(e.subject, ".checkpoint.created") && e.data.is_object()) {
      json c = e.data;
      c["t"] = e.t;
      confirmed_[c.value("sequenceNumber", int64_t{0})] = c;
      created_.push_back(c);
    } else if (e.subject.rfind("inbox.", 0) == 0) {
      // Each publish of a feed shows here once: a feed the harness sent again (a stream that
      // could not answer, on the cluster) may show as often as it was sent, nothing more.
      std::string id = e.data.is_object() ? e.data.value("feed", "") : "";
      auto sent = feed_attempts_.find(id);
      const int allowed = sent == feed_attempts_.end() ? 1 : std::max(1, sent->second);
      if (id.empty() || ++feed_seen_count_[id] > allowed) ++unattributed_;
      if (!id.empty()) feed_seen_.insert(id);
    }
  }
}

Status ChaosRun::FinalStoreCheck(json* out) {
  if (o_.store == "firestore") {
    ::setenv("FIRESTORE_EMULATOR_HOST", ("127.0.0.1:" + std::to_string(emulator_port_)).c_str(), 1);
    reference_agent::SidecarClient emulator("http://127.0.0.1:" + std::to_string(emulator_port_),
                                            std::chrono::milliseconds(5000));
    emulator.Call("PUT", "/emulator/v1/faults",
                  json{{"errorRate", 0}, {"delayRate", 0}, {"dropRate", 0}});
  }
  if (cluster()) ::setenv("NATS_URL", NatsUrl().c_str(), 1);  // the store URL names no host
  auto store = agentckpt::OpenStore(SidecarEnv()["CKPT_STORE"]);
  if (!store.ok()) return store.status();
  auto list = (*store)->List(o_.agent_id, 1000);
  if (!list.ok()) return list.status();
  std::set<int64_t> stored;
  for (const auto& info : *list) stored.insert(info.sequence_number);
  auto latest = (*store)->GetLatestVerified(o_.agent_id);
  if (!latest.ok()) return latest.status();
  int64_t oldest_kept = stored.empty() ? 0 : *stored.begin();
  int missing = 0;
  for (const auto& [seq, c] : confirmed_) {
    if (seq >= oldest_kept && stored.count(seq) == 0) ++missing;
  }
  // Every checkpoint listed reads back, verified (not only the newest).
  int unreadable = 0;
  json unreadable_errors = json::array();
  for (const auto& info : *list) {
    auto cp = (*store)->GetById(o_.agent_id, info.checkpoint_id);
    if (cp.ok()) continue;
    ++unreadable;
    if (unreadable_errors.size() < 5) unreadable_errors.push_back(cp.status().ToString());
  }
  int64_t newest_confirmed = confirmed_.empty() ? 0 : confirmed_.rbegin()->first;
  *out = {{"stored", stored.size()},
          {"latestVerifiedSeq", latest->checkpoint.sequence_number},
          {"skippedCorrupt", latest->skipped.size()},
          {"newestConfirmedSeq", newest_confirmed},
          {"confirmedMissingWithinRetention", missing},
          {"listedUnreadable", unreadable},
          {"listedUnreadableErrors", unreadable_errors},
          {"pass", missing == 0 && unreadable == 0 && latest->skipped.empty() &&
                       latest->checkpoint.sequence_number >= newest_confirmed}};
  return agentckpt::OkStatus();
}

namespace {

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace

json ChaosRun::LedgerSummary() const {
  std::map<std::string, int> by_point;
  int interrupted = 0, surfaced = 0, not_surfaced = 0, not_retried = 0;
  for (const Mark& c : crashes_) {
    ++by_point[c.what];
    if (c.what != "after_begin" && c.what != "after_effect") continue;
    ++interrupted;  // begun, not ended: the next begin of the key must answer OUTCOME_UNKNOWN
    const Mark* next = nullptr;
    for (const Mark& m : key_marks_) {
      if (m.key == c.key && m.t > c.t) {
        next = &m;
        break;
      }
    }
    if (next == nullptr) {
      ++not_retried;
    } else if (next->what == "unknown") {
      ++surfaced;
    } else {
      ++not_surfaced;
    }
  }
  return {{"injectedCrashes", by_point},
          {"interruptedWriteCalls", interrupted},
          {"surfacedOutcomeUnknown", surfaced},
          {"endedWithoutOutcomeUnknown", not_surfaced},
          {"notRetriedByRunEnd", not_retried},
          {"sinkExecutions", sink_executions_},
          {"duplicateExecutions", duplicates_total_},
          {"completedKeysReexecuted", reexecuted_completed_}};
}

int ChaosRun::Run() {
  std::printf(
      "chaos: seed %llu, %d cycles, mode %s, store %s%s%s\n",
      static_cast<unsigned long long>(o_.seed), o_.cycles, o_.mode.c_str(), o_.store.c_str(),
      o_.faults ? " with faults" : "",
      cluster() ? (o_.node_kills ? " (3-node cluster, node kills)" : " (3-node cluster)") : "");
  std::fflush(stdout);
  std::string load_start = LoadAverage();
  Status st = Setup();
  if (!st.ok()) {
    std::fprintf(stderr, "chaos: setup failed: %s (logs in %s/logs)\n", st.ToString().c_str(),
                 work_.c_str());
    return 2;
  }
  std::ofstream csv(o_.out_dir + "/cycles.csv"), jsonl(o_.out_dir + "/cycles.jsonl");
  csv << CycleRow::CsvHeader() << "\n";
  std::vector<CycleRow> rows;
  auto started = std::chrono::steady_clock::now();
  for (int n = 1; n <= o_.cycles; ++n) {
    int sidecar_before = sidecar_inc_, agent_before = agent_inc_;
    CycleRow row = Cycle(n);
    csv << row.ToCsv() << "\n" << std::flush;
    jsonl << row.ToJson().dump() << "\n" << std::flush;
    std::string nodes;
    if (cluster()) {
      nodes = "  nodes down " + std::to_string(row.nodes_down) +
              (row.node_kill.empty()
                   ? std::string()
                   : " kill " + row.node_kill + (row.node_kill_leader ? "(leader)" : "") + "@" +
                         row.node_kill_phase) +
              (row.node_restart.empty() ? std::string() : " restart " + row.node_restart);
    }
    std::printf(
        "cycle %4d %-7s %-7s recovery %8.1f ms  resume %8.1f ms  seq %lld/%lld  "
        "lost steps %lld  dup %d%s  %s%s\n",
        n, row.signal.c_str(), row.target.c_str(), row.recovery_ms, row.agent_resume_ms,
        static_cast<long long>(row.restored_seq), static_cast<long long>(row.newest_confirmed_seq),
        static_cast<long long>(row.steps_lost), row.duplicates, nodes.c_str(),
        row.ok ? "ok" : "FAIL ", row.note.c_str());
    std::fflush(stdout);
    if (row.ok) {  // keep the logs of the processes that lived through a failed cycle only
      const std::string sidecar_log = LogPath("sidecar", sidecar_before);
      const std::string agent_log = LogPath("agent", agent_before);
      if (sidecar_inc_ != sidecar_before && keep_logs_.count(sidecar_log) == 0) {
        std::remove(sidecar_log.c_str());
      }
      if (agent_inc_ != agent_before && keep_logs_.count(agent_log) == 0) {
        std::remove(agent_log.c_str());
      }
    } else {
      KeepLogsOf(sidecar_before, agent_before);
      KeepLogsOf(sidecar_inc_, agent_inc_);
      if (cluster()) KeepNatsLogs(n);
    }
    rows.push_back(std::move(row));
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string load_end = LoadAverage();
  json heal = nullptr;
  if (cluster()) {
    // Every server back and healthy before the processes stop and the store is checked.
    Status healed = nodes_->Heal(kQuietWaitMs);
    heal = healed.ok() ? json("ok") : json(healed.ToString());
  }
  agent_->Signal(SIGTERM);
  agent_->Wait(15000);
  sidecar_->Signal(SIGTERM);
  sidecar_->Wait(10000);
  SleepMs(200);  // let the last events arrive before the final scan
  ScanEvents();
  json final_check;
  Status fc = FinalStoreCheck(&final_check);
  if (!fc.ok()) final_check = {{"pass", false}, {"error", fc.ToString()}};

  std::ofstream created_csv(o_.out_dir + "/created.csv");
  created_csv << "sequence,trigger,duration_ms,size_bytes\n";
  for (const json& c : created_) {
    created_csv << c.value("sequenceNumber", int64_t{0}) << ',' << c.value("trigger", "") << ','
                << c.value("durationMs", 0.0) << ',' << c.value("sizeBytes", int64_t{0}) << "\n";
  }
  json summary = Summarize(o_, rows, created_);
  summary["finalStoreCheck"] = final_check;
  const json ledger = LedgerSummary();
  summary["ledger"] = ledger;
  for (const char* k :
       {"duplicateExecutions", "completedKeysReexecuted", "endedWithoutOutcomeUnknown"}) {
    const int v = ledger[k].get<int>();
    summary["targets"][k] = {{"value", v}, {"limit", 0}, {"pass", v == 0}};
    if (v != 0) summary["pass"] = false;
  }
  summary["unattributedAppMessages"] = unattributed_;
  summary["targets"]["unattributedAppMessages"] = {
      {"value", unattributed_}, {"limit", 0}, {"pass", unattributed_ == 0}};
  summary["targets"]["finalStoreCheck"] = {{"pass", final_check.value("pass", false)}};
  summary["pass"] =
      summary["pass"].get<bool>() && unattributed_ == 0 && final_check.value("pass", false);
  if (cluster()) {
    // Summarize counted the kills from the rows; the kills themselves say more.
    json kills = NodeKillSummary();
    kills["healAtEnd"] = heal;
    kills["plannedPerCycleProbability"] = o_.node_kills ? 0.5 : 0.0;
    summary["nodeKills"] = kills;
  }
  summary["seconds"] = seconds;
  summary["loadAverageStart"] = load_start;
  summary["loadAverageEnd"] = load_end;
  summary["inboxMessagesFed"] = feed_sent_;
  int resent = 0;
  for (const auto& [id, attempts] : feed_attempts_) resent += attempts > 1 ? 1 : 0;
  summary["inboxFeedsSentAgain"] = resent;
  summary["options"] = {{"minRunMs", o_.min_run_ms},
                        {"maxRunMs", o_.max_run_ms},
                        {"stepMs", o_.step_ms},
                        {"periodS", o_.period_s},
                        {"faultErrorRate", o_.fault_error_rate},
                        {"faultDelayRate", o_.fault_delay_rate},
                        {"faultDelayMs", o_.fault_delay_ms},
                        {"faultDropRate", o_.fault_drop_rate},
                        {"nodeKills", cluster() && o_.node_kills},
                        {"nodeDownMinMs", o_.node_down_min_ms},
                        {"nodeDownMaxMs", o_.node_down_max_ms}};
  std::ofstream(o_.out_dir + "/summary.json") << summary.dump(2) << "\n";
  std::printf("chaos: %s\n", summary.dump(2).c_str());
  std::printf("chaos: %s (seed %llu)\n", summary["pass"].get<bool>() ? "PASS" : "FAIL",
              static_cast<unsigned long long>(o_.seed));
  return summary["pass"].get<bool>() ? 0 : 1;
}

}  // namespace chaos
