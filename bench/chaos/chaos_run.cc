#include "bench/chaos/chaos_run.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

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

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

ChaosRun::ChaosRun(ChaosOptions options) : o_(std::move(options)), rng_(o_.seed) {
  work_ = o_.out_dir + "/work";
}

std::string ChaosRun::LogPath(const std::string& who, int incarnation) const {
  return work_ + "/logs/" + who + "-" + std::to_string(incarnation) + ".log";
}

std::map<std::string, std::string> ChaosRun::SidecarEnv() const {
  std::map<std::string, std::string> env = {
      {"AGENT_ID", o_.agent_id},
      {"NATS_URL", "nats://127.0.0.1:" + std::to_string(nats_port_)},
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
  std::remove((work_ + "/checkpoints.db").c_str());
  nats_port_ = PickFreePort();
  nats_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{o_.nats_server, "-js", "-a", "127.0.0.1", "-p",
                               std::to_string(nats_port_), "-sd", work_ + "/jetstream"},
      std::map<std::string, std::string>{}, work_ + "/logs/nats.log");
  if (!WaitForPort(nats_port_, 10000)) return agentckpt::UnavailableError("nats-server not up");
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
  Status st = obs_.Start("nats://127.0.0.1:" + std::to_string(nats_port_), o_.agent_id, kStream);
  if (!st.ok()) return st;
  st = sink_.Start("nats://127.0.0.1:" + std::to_string(nats_port_), o_.agent_id);
  if (!st.ok()) return st;
  {
    std::string url = "nats://127.0.0.1:" + std::to_string(nats_port_);
    auto connected = agentckpt::ConnectNatsUrl(url);
    if (!connected.ok()) return agentckpt::UnavailableError("connect for setup");
    natsConnection* nc = connected->release();
    st = reference_agent::SetupInbox(nc, kStream, o_.agent_id, 3000);
    natsConnection_Destroy(nc);
    if (!st.ok()) return st;
  }
  tail_ = std::make_unique<reference_agent::ProbeLogTail>(work_ + "/probe.jsonl");
  http_port_ = PickFreePort();
  st = StartSidecar();
  if (!st.ok()) return st;
  reference_agent::SidecarClient client("http://127.0.0.1:" + std::to_string(http_port_),
                                        std::chrono::milliseconds(2000));
  for (int i = 0; i < 1000 && client.Call("GET", "/healthz").status != 200; ++i) SleepMs(10);
  st = StartAgent();
  if (!st.ok()) return st;
  Resume r;
  if (!WaitResume(kRestoreWaitMs, &r)) return agentckpt::UnavailableError("agent did not start");
  if (obs_.WaitFor(0, ".checkpoint.created", 10000) < 0) {
    return agentckpt::UnavailableError("no checkpoint.created within 10 s of the first task");
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
                                   "nats://127.0.0.1:" + std::to_string(nats_port_),
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
    if (EndsWith(e.subject, ".checkpoint.created") && e.data.is_object()) {
      json c = e.data;
      c["t"] = e.t;
      confirmed_[c.value("sequenceNumber", int64_t{0})] = c;
      created_.push_back(c);
    } else if (e.subject.rfind("inbox.", 0) == 0) {
      std::string id = e.data.is_object() ? e.data.value("feed", "") : "";
      if (id.empty() || !feed_seen_.insert(id).second) ++unattributed_;
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
  int64_t newest_confirmed = confirmed_.empty() ? 0 : confirmed_.rbegin()->first;
  *out = {{"stored", stored.size()},
          {"latestVerifiedSeq", latest->checkpoint.sequence_number},
          {"skippedCorrupt", latest->skipped.size()},
          {"newestConfirmedSeq", newest_confirmed},
          {"confirmedMissingWithinRetention", missing},
          {"pass", missing == 0 && latest->skipped.empty() &&
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
  std::printf("chaos: seed %llu, %d cycles, mode %s, store %s%s\n",
              static_cast<unsigned long long>(o_.seed), o_.cycles, o_.mode.c_str(),
              o_.store.c_str(), o_.faults ? " with faults" : "");
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
    std::printf(
        "cycle %4d %-7s %-7s recovery %8.1f ms  resume %8.1f ms  seq %lld/%lld  "
        "lost steps %lld  dup %d  %s%s\n",
        n, row.signal.c_str(), row.target.c_str(), row.recovery_ms, row.agent_resume_ms,
        static_cast<long long>(row.restored_seq), static_cast<long long>(row.newest_confirmed_seq),
        static_cast<long long>(row.steps_lost), row.duplicates, row.ok ? "ok" : "FAIL ",
        row.note.c_str());
    std::fflush(stdout);
    if (row.ok) {  // keep the logs of failed cycles only
      if (sidecar_inc_ != sidecar_before) std::remove(LogPath("sidecar", sidecar_before).c_str());
      if (agent_inc_ != agent_before) std::remove(LogPath("agent", agent_before).c_str());
    }
    rows.push_back(std::move(row));
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string load_end = LoadAverage();
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
  summary["seconds"] = seconds;
  summary["loadAverageStart"] = load_start;
  summary["loadAverageEnd"] = load_end;
  summary["inboxMessagesFed"] = feed_sent_;
  summary["options"] = {{"minRunMs", o_.min_run_ms},
                        {"maxRunMs", o_.max_run_ms},
                        {"stepMs", o_.step_ms},
                        {"periodS", o_.period_s},
                        {"faultErrorRate", o_.fault_error_rate},
                        {"faultDelayRate", o_.fault_delay_rate},
                        {"faultDelayMs", o_.fault_delay_ms},
                        {"faultDropRate", o_.fault_drop_rate}};
  std::ofstream(o_.out_dir + "/summary.json") << summary.dump(2) << "\n";
  std::printf("chaos: %s\n", summary.dump(2).c_str());
  std::printf("chaos: %s (seed %llu)\n", summary["pass"].get<bool>() ? "PASS" : "FAIL",
              static_cast<unsigned long long>(o_.seed));
  return summary["pass"].get<bool>() ? 0 : 1;
}

}  // namespace chaos
