// ChaosRun: one kill-and-restart cycle, and the restart with its measurements.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include "bench/chaos/chaos_run.h"
#include "bench/chaos/chaos_run_internal.h"
#include "bench/chaos/consumer_shift.h"
#include "examples/reference_agent/sidecar_client.h"
#include "examples/reference_agent/task_model.h"

namespace chaos {

using nlohmann::json;
using reference_agent::WallMillis;

using agentckpt::Status;

namespace {
// A nats-server kill or restart this long before the crash may still show in a consumer's state.
constexpr double kNodeEventWindowMs = 30000;
// The phase timings of a checkpoint.restored payload.
json RestorePhases(const json& restored) {
  json phases = json::object();
  for (const char* k : {"loadMs", "replayMs", "workspaceMs", "promptMs", "resumeMs"}) {
    if (restored.contains(k)) phases[k] = restored[k];
  }
  return phases;
}
}  // namespace

std::string ChaosRun::SidecarLastError() {
  std::string said = LastLogLine("sidecar", sidecar_inc_, "\"level\":\"error\"");
  if (said.size() > 600) said = said.substr(0, 600) + "...";
  return said.empty() ? "" : "; its last error: " + said;
}

std::string ChaosRun::AgentLastWords() {
  if (agent_->running()) return "";
  const std::string said = LastLogLine("agent", agent_inc_, "[agent]");
  return said.empty() ? "" : ": " + said;
}

std::string ChaosRun::PreShutdownFromLog(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line, id;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == "checkpoint.created" &&
        j.value("trigger", "") == "pre_shutdown") {
      id = j.value("checkpointId", "");
    }
  }
  return id;
}

void ChaosRun::Restart(bool sidecar, bool agent, CycleRow* row) {
  // The consumer is read before the clock starts (both processes are dead: nothing changes it
  // meanwhile): on the cluster the read may wait for a leader election, which is no part of the
  // recovery.
  ConsumerState before;
  bool have_before = false;
  if (sidecar && agent) {
    auto c = obs_.Consumer(kNatsRetryMs);
    if (c.ok()) before = *c, have_before = true;
  }
  if (cluster() && node_phase_ == "restore") {
    nodes_->PlanKill(row->cycle, "restore", node_delay_ms_, node_victim_, node_fallback_,
                     node_down_ms_);
  }
  const double t0 = WallMillis();
  const size_t e0 = obs_.size();
  double window_end = 0;
  restart_t0_ = t0;
  double resumed_t = 0;
  if (sidecar) {
    int64_t idx = -1;
    for (int attempt = 0; attempt < 3 && idx < 0; ++attempt) {
      if (!StartSidecar().ok()) continue;
      idx = obs_.WaitFor(e0, ".checkpoint.restored", kRestoreWaitMs);
      if (idx < 0 && sidecar_->running()) break;  // up but no restore: do not hide it
      if (idx < 0) {
        AddNote(row, "sidecar exited at start with " + std::to_string(sidecar_->exit_code()) +
                         SidecarLastError());
        SleepMs(50);
      }
    }
    if (idx < 0) {
      AddNote(row,
              "no checkpoint.restored within 30 s of the sidecar restart" + SidecarLastError());
    } else {
      Observed e = obs_.at(static_cast<size_t>(idx));
      row->recovery_ms = e.t - t0;
      window_end = e.t;
      row->restore_source = "startup";
      row->restored_seq = e.data.value("sequenceNumber", int64_t{-1});
      row->restored_id = e.data["checkpointId"].is_string() ? e.data["checkpointId"] : "";
      row->restore_total_ms = e.data.value("totalMs", -1.0);
      row->restore_phases_ms = RestorePhases(e.data);
      row->replay_handled = e.data.value("handled", 0);
      row->replay_pending = e.data.value("pending", 0);
      const json& journal = e.data["journal"];
      if (journal.is_object()) row->restored_journal_seq = journal.value("lastSequence", -1);
    }
    if (have_before) {
      auto after = obs_.Consumer(kNatsRetryMs);
      bool same = after.ok() && *after == before;
      // More messages pending would be inbox traffic, counted below.
      const bool failover_shift = after.ok() && IsFailoverShift(before, *after, confirmed_acks_);
      if (!same && failover_shift && cluster() &&
          nodes_->EventWithin(kill_t_ - kNodeEventWindowMs, WallMillis())) {
        row->consumer_unchanged = "failover";
        row->consumer_shift = before.ToString() + " -> " + after->ToString();
      } else {
        row->consumer_unchanged = same ? "yes" : "no";
      }
      if (!same && row->consumer_unchanged == "no") {
        AddNote(row, "durable consumer changed during restore: " + before.ToString() + " -> " +
                         (after.ok() ? after->ToString() : after.status().ToString()));
      }
    }
  }
  int64_t resumed_global = -1;
  const int64_t checkpoint_global = sidecar ? CheckpointGlobal(row->restored_id) : -1;
  if (agent) {
    const double ta = WallMillis();
    const size_t ea = obs_.size();
    Resume r;
    if (!StartAgent().ok() || !WaitResume(kRestoreWaitMs, &r)) {
      AddNote(row, "agent did not resume within 30 s (exit " + std::to_string(agent_->exit_code()) +
                       ")" + AgentLastWords());
    } else {
      const json& l = r.line;
      resumed_t = l.value("t", 0.0);
      row->agent_resume_ms = l.value("t", 0.0) - (sidecar ? t0 : ta);
      if (!sidecar) {
        row->restore_source = l.value("source", "");
        if (row->restore_source == "post") {
          int64_t idx = obs_.WaitFor(ea, ".checkpoint.restored", 5000);
          if (idx >= 0) {
            Observed e = obs_.at(static_cast<size_t>(idx));
            row->recovery_ms = e.t - ta;
            window_end = e.t;
            row->restore_total_ms = e.data.value("totalMs", -1.0);
            row->restore_phases_ms = RestorePhases(e.data);
          } else {
            AddNote(row, "agent's POST /v1/restore published no checkpoint.restored");
          }
        } else {
          window_end = l.value("t", 0.0);
        }
        row->restored_seq = l.value("seq", int64_t{-1});
        row->restored_id = l["ckpt"].is_string() ? l["ckpt"].get<std::string>() : "";
        row->replay_handled = l.value("handled", 0);
        row->replay_pending = l.value("pending", 0);
      }
      row->resumed_from_restore = l.value("seq", int64_t{-2}) == row->restored_seq;
      if (!row->resumed_from_restore) AddNote(row, "agent resumed from another checkpoint");
      int64_t g = l.value("global", int64_t{0});
      resumed_global = g;
      row->steps_lost = std::max<int64_t>(0, r.last_global_before - g);
      row->msgs_after_checkpoint = r.msgs_after_checkpoint;
    }
  }
  // The restore ends when the sidecar has restored and the agent works again (or now, when one
  // of them did not).
  restore_end_t_ = std::max(window_end, resumed_t);
  if (restore_end_t_ <= 0 || (sidecar && window_end <= 0) || (agent && resumed_t <= 0)) {
    restore_end_t_ = WallMillis();
  }
  // Inbox traffic while the restore ran: the feed is idle, so any inbox message is foreign.
  DrainProbeLog();
  CheckAcknowledged(t0, kill_t_, resumed_global, checkpoint_global, row);
  size_t n = obs_.size();
  for (size_t i = e0; i < n && window_end > 0; ++i) {
    Observed e = obs_.at(i);
    if (e.t < t0 || e.t > window_end) continue;
    if (e.subject.rfind("inbox.", 0) != 0) continue;
    ++row->app_msgs_in_window;
    ++row->replay_side_effects;
    AddNote(row, "during restore: " + e.subject + " " + e.data.dump());
  }
}

int64_t ChaosRun::CheckpointGlobal(const std::string& id) {
  if (id.empty()) return -1;
  reference_agent::SidecarClient client("http://127.0.0.1:" + std::to_string(http_port_),
                                        std::chrono::milliseconds(5000));
  reference_agent::HttpReply doc = client.Call("GET", "/v1/checkpoints/" + id);
  if (doc.status != 200) return -1;
  auto model = reference_agent::TaskModel::FromCheckpoint(doc.body);
  return model.ok() ? model->global_step() : -1;
}

void ChaosRun::CheckAcknowledged(double t0, double kill_t, int64_t resumed_global,
                                 int64_t checkpoint_global, CycleRow* row) {
  std::vector<Ack> later;  // journaled after the restart: the next cycle's
  double kept_t = last_kept_ack_t_;
  for (const Ack& a : acks_) {
    if (a.t >= t0) {
      later.push_back(a);
      continue;
    }
    ++row->acked_updates;
    // After a sidecar restart: journaled updates by sequence, the others (memory mode) by the
    // restored checkpoint's step. After an agent restart: by the step it resumed at. A step's
    // tool call is reported before the patch that completes the step: it needs the step before.
    const int64_t step = a.what == "tool_call" ? a.global - 1 : a.global;
    bool lost = a.journal_seq > 0
                    ? row->restored_journal_seq >= 0 && a.journal_seq > row->restored_journal_seq
                    : checkpoint_global >= 0 && step > checkpoint_global;
    lost = lost || (resumed_global >= 0 && step > resumed_global);
    if (lost) {
      ++row->acked_lost;
    } else {
      kept_t = std::max(kept_t, a.t);
    }
  }
  if (row->acked_lost > 0) {
    AddNote(row, std::to_string(row->acked_lost) + " acknowledged updates not restored (journal " +
                     std::to_string(row->restored_journal_seq) + ", step " +
                     std::to_string(resumed_global) + ")");
  }
  row->work_lost_ms = kept_t > 0 ? std::max(0.0, kill_t - kept_t) : 0;
  last_kept_ack_t_ = kept_t;
  acks_ = std::move(later);
}

CycleRow ChaosRun::Cycle(int n) {
  CycleRow row;
  row.cycle = n;
  node_phase_.clear();
  if (cluster() && o_.node_kills) PlanNodeKill(n, &row);
  // An agent started with a crash point is never stopped with SIGTERM: it may crash first.
  bool term =
      o_.mode == "sigterm" || (o_.mode == "mixed" && agent_crash_point_.empty() && rng_() % 4 == 0);
  static const char* kTargets[] = {"agent", "sidecar", "both"};
  // An agent started with a crash point crashes there on its own; the sidecar goes down with it
  // in half of those cycles.
  const bool injected = !term && !agent_crash_point_.empty();
  row.signal = term ? "SIGTERM" : "SIGKILL";
  row.target = term       ? "both"
               : injected ? (rng_() % 2 == 0 ? "agent" : "both")
                          : kTargets[rng_() % 3];
  row.fed = static_cast<int>(rng_() % 4);
  if (injected) row.fed = std::max(row.fed, agent_crash_call_);
  for (int i = 0; i < row.fed; ++i) {
    ++feed_sent_;
    const std::string id = "f-" + std::to_string(feed_sent_);
    json m = {{"feed", id}, {"request", "summarise ticket " + std::to_string(feed_sent_)}};
    int attempts = 0;
    Status fed = obs_.Feed(m, run_id_ + "-" + id, kNatsRetryMs, &attempts);
    feed_attempts_[id] = attempts;
    if (!fed.ok()) AddNote(&row, "feed " + id + " failed: " + fed.ToString());
  }
  // The feed is seen by the observer before anything can crash: an agent that crashes itself
  // right after the feed must not make a fed message look like traffic during the restore.
  const std::string last_fed = "f-" + std::to_string(feed_sent_);
  for (int waited = 0; row.fed > 0 && feed_seen_.count(last_fed) == 0 && waited < 5000;
       waited += 2) {
    SleepMs(2);
    ScanEvents();
  }
  if (injected) {
    row.injected_crash = agent_crash_point_;
    const double t0 = WallMillis();
    const int code = agent_->Wait(20000);  // until the agent reaches its crash point
    row.run_ms = static_cast<int>(WallMillis() - t0);
    if (code != 128 + SIGKILL) {
      AddNote(&row, "agent did not crash at " + agent_crash_point_ + " (exit " +
                        std::to_string(code) + ")" + AgentLastWords());
    }
  } else {
    row.run_ms =
        o_.min_run_ms +
        static_cast<int>(rng_() % static_cast<uint64_t>(o_.max_run_ms - o_.min_run_ms + 1));
    SleepMs(row.run_ms);  // the random moment of the crash
    if (!agent_->running())
      AddNote(&row,
              "agent had exited with " + std::to_string(agent_->exit_code()) + AgentLastWords());
  }
  if (!sidecar_->running()) {
    AddNote(&row, "sidecar had exited with " + std::to_string(sidecar_->exit_code()) +
                      SidecarLastError());
  }
  bool kill_agent = row.target != "sidecar", kill_sidecar = row.target != "agent";
  std::string pre_id;
  kill_t_ = WallMillis();
  if (!term) {
    if (kill_agent) agent_->Signal(SIGKILL);
    if (kill_sidecar) sidecar_->Signal(SIGKILL);
    if (kill_agent) agent_->Wait(5000);
    if (kill_sidecar) sidecar_->Wait(5000);
  } else {
    // A pod shutdown with a native sidecar: the agent stops first, then the sidecar.
    agent_->Signal(SIGTERM);
    int code = agent_->Wait(15000);
    if (code != 0) AddNote(&row, "agent SIGTERM exit " + std::to_string(code));
    if (code == -1) agent_->Signal(SIGKILL), agent_->Wait(5000);
    size_t from = obs_.size();
    sidecar_->Signal(SIGTERM);
    row.sidecar_exit = sidecar_->Wait(10000);
    if (row.sidecar_exit == -1) sidecar_->Signal(SIGKILL), sidecar_->Wait(5000);
    for (int64_t i = obs_.WaitFor(from, ".checkpoint.created", 2000); i >= 0 && pre_id.empty();
         i = obs_.WaitFor(static_cast<size_t>(i) + 1, ".checkpoint.created", 2000)) {
      Observed e = obs_.at(static_cast<size_t>(i));
      if (e.data.value("trigger", "") == "pre_shutdown") pre_id = e.data.value("checkpointId", "");
    }
    if (pre_id.empty()) pre_id = PreShutdownFromLog(LogPath("sidecar", sidecar_inc_));
  }
  ScanEvents();
  row.newest_confirmed_seq = confirmed_.empty() ? 0 : confirmed_.rbegin()->first;
  std::vector<int64_t> confirmed_seqs;
  for (const auto& [seq, c] : confirmed_) confirmed_seqs.push_back(seq);
  Restart(kill_sidecar, kill_agent, &row);
  for (int64_t seq : confirmed_seqs) row.confirmed_lost += seq > row.restored_seq ? 1 : 0;
  if (term) {
    row.pre_shutdown = pre_id.empty()              ? "missing"
                       : pre_id == row.restored_id ? "durable"
                                                   : "not-restored";
  }
  ScanEvents();
  row.duplicates = duplicates_pending_;
  duplicates_pending_ = 0;
  if (cluster()) {
    AuditStore(&row);
    EndNodeKills(n, &row);
  }
  bool in_sla = row.recovery_ms < o_.sla_ms && row.agent_resume_ms < o_.sla_ms &&
                (row.recovery_ms >= 0 || row.agent_resume_ms >= 0);
  row.ok = row.confirmed_lost == 0 && row.replay_side_effects == 0 && in_sla &&
           row.consumer_unchanged != "no" && (!term || row.pre_shutdown == "durable") &&
           row.resumed_from_restore && row.acked_lost == 0 && row.note.empty();
  return row;
}

}  // namespace chaos
