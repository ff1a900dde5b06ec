// ChaosRun: the crash-recovery proof. It starts a real nats-server (and, for the Firestore
// store, the Firestore emulator with fault injection), the agentckpt sidecar and the reference
// agent; then, cycle after cycle, it feeds the agent's inbox, lets it work for a random time,
// kills the agent, the sidecar or both (SIGKILL, or SIGTERM for a pod shutdown), restarts them
// and measures the recovery against what it saw before the kill (see CycleRow).
//
// Outputs in options.out_dir: cycles.csv, cycles.jsonl, created.csv (every checkpoint.created),
// summary.json, and work/ (the agent's probe log, the store, per-process logs of failed cycles).
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bench/chaos/chaos_types.h"
#include "bench/chaos/child_process.h"
#include "bench/chaos/effect_sink.h"
#include "bench/chaos/nats_observer.h"
#include "common/status.h"
#include "examples/reference_agent/probe_log.h"

namespace chaos {

class ChaosRun {
 public:
  explicit ChaosRun(ChaosOptions options);
  // Runs every cycle and writes the outputs. Returns the process exit code: 0 when every
  // target holds (timing targets only if options.timing_targets), 1 when one fails, 2 when the
  // run could not be set up.
  int Run();

 private:
  // What the probe log said when an agent incarnation resumed.
  struct Resume {
    nlohmann::json line;
    double restored_step_t = 0;  // when the restored step was first finished (0: unknown)
    int64_t last_global_before = 0;
    double last_t_before = 0;
    int msgs_after_checkpoint = 0;
  };

  // An update the sidecar answered 2xx, as the agent's probe log has it.
  struct Ack {
    double t = 0;
    int64_t journal_seq = -1;
    int64_t global = 0;  // the agent's global step after it
    std::string what;    // put | patch | tool_call
  };

  agentckpt::Status Setup();
  agentckpt::Status StartSidecar();
  agentckpt::Status StartAgent();
  // Waits until the probe log holds the "resume" line of the running agent; false on timeout.
  bool WaitResume(int timeout_ms, Resume* out);
  CycleRow Cycle(int n);
  void Restart(bool sidecar, bool agent, CycleRow* row);
  // Reads the new probe-log lines, then the sink's new executions (in that order: an "ended"
  // line is read before any execution that came after it).
  void DrainProbeLog();
  // The write-call figures over the whole run (summary "ledger") and their targets.
  nlohmann::json LedgerSummary() const;
  // Checks the updates acknowledged before the restart at t0 against what was restored: the
  // restored journal sequence (sidecar restarts) and the step the agent resumed at (agent
  // restarts); sets acked_updates, acked_lost and work_lost_ms.
  // An acknowledged update without a journal sequence (memory mode) is checked against the step
  // of the restored checkpoint, `checkpoint_global` (-1: no sidecar restart).
  void CheckAcknowledged(double t0, double kill_t, int64_t resumed_global,
                         int64_t checkpoint_global, CycleRow* row);
  // The agent's global step in checkpoint `id`, read from the sidecar; -1 when unknown.
  int64_t CheckpointGlobal(const std::string& id);
  // Records every checkpoint.created received so far (confirmed_) and counts application
  // messages (feed repeats, inbox messages nobody fed).
  void ScanEvents();
  std::string PreShutdownFromLog(const std::string& log_path);
  agentckpt::Status FinalStoreCheck(nlohmann::json* out);
  std::map<std::string, std::string> SidecarEnv() const;
  std::string LogPath(const std::string& who, int incarnation) const;

  ChaosOptions o_;
  std::mt19937_64 rng_;
  std::string work_;
  int nats_port_ = 0, http_port_ = 0, emulator_port_ = 0;
  std::unique_ptr<ChildProcess> nats_, emulator_, sidecar_, agent_;
  int sidecar_inc_ = 0, agent_inc_ = 0;
  double kill_t_ = 0;  // when this cycle's signal was sent
  NatsObserver obs_;
  std::unique_ptr<reference_agent::ProbeLogTail> tail_;
  EffectSink sink_;
  std::string agent_crash_point_;  // the running agent's injected crash point ("": none)
  int agent_crash_call_ = 0;
  int crash_starts_ = 0;

  // From the probe log and the sink.
  struct Mark {
    double t = 0;
    std::string key, what;  // what: the crash point, or "unknown" / "ended"
  };
  std::vector<Mark> crashes_;              // injected crashes, in order
  std::vector<Mark> key_marks_;            // "unknown" and "ended" lines, in order
  std::map<std::string, double> ended_t_;  // key -> when its end was first acknowledged
  int sink_executions_ = 0, reexecuted_completed_ = 0, duplicates_total_ = 0;
  std::set<uint64_t> handled_seqs_;
  std::map<int64_t, double> step_time_;  // global step -> when it was last finished
  int64_t last_global_ = 0;
  double last_global_t_ = 0;
  std::map<int64_t, Resume> resume_by_pid_;
  int duplicates_pending_ = 0;
  std::vector<Ack> acks_;       // acknowledged updates not yet checked against a restart
  double last_kept_ack_t_ = 0;  // the newest acknowledged update known to be kept

  // From NATS.
  size_t scanned_ = 0;
  std::map<int64_t, nlohmann::json> confirmed_;  // sequence -> checkpoint.created payload
  std::vector<nlohmann::json> created_;          // every checkpoint.created, with "t"
  std::set<std::string> feed_seen_;
  int feed_sent_ = 0;
  int unattributed_ = 0;  // inbox messages outside any restore window nobody accounts for
};

}  // namespace chaos
