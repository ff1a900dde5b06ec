// ChaosRun: the run (Run), and what the agent's probe log and the observed events say. Setup is
// in chaos_run_setup.cc, node kills in chaos_run_nodes.cc, store audits in chaos_run_audit.cc,
// each cycle in chaos_cycle.cc.
#include "bench/chaos/chaos_run.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "bench/chaos/chaos_run_internal.h"
#include "bench/chaos/chaos_summary.h"

namespace chaos {

using agentckpt::Status;
using nlohmann::json;
using reference_agent::WallMillis;

ChaosRun::ChaosRun(ChaosOptions options)
    : o_(std::move(options)), rng_(o_.seed), node_rng_(o_.seed ^ 0x6e6f64656b696c6cULL) {
  work_ = o_.out_dir + "/work";
  run_id_ = std::to_string(o_.seed) + "-" + std::to_string(static_cast<int64_t>(WallMillis()));
}

void ChaosRun::KeepLogsOf(int sidecar_incarnation, int agent_incarnation) {
  keep_logs_.insert(LogPath("sidecar", sidecar_incarnation));
  keep_logs_.insert(LogPath("agent", agent_incarnation));
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
    } else if (k == "acked") {
      confirmed_acks_.insert(line.value("seq", uint64_t{0}));
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

namespace {

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace

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
