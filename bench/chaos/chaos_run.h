// ChaosRun: the crash-recovery proof. It starts a real nats-server (and, for the Firestore
// store, the Firestore emulator with fault injection), the agentckpt sidecar and the reference
// agent; then, cycle after cycle, it feeds the agent's inbox, lets it work for a random time,
// kills the agent, the sidecar or both (SIGKILL, or SIGTERM for a pod shutdown), restarts them
// and measures the recovery against what it saw before the kill (see CycleRow).
//
// With the JetStream store (--store jetstream) NATS is a 3-node cluster (NodeChaos) instead:
// the store's three streams and the agent's inbox stream and consumer are R3, the sidecar gets
// every server in NATS_URL, and in half of the cycles one server is SIGKILLed as well at a
// random moment (every third time the leader of the agent-record stream) and restarted later
// (node_chaos.h); the recovery is reported apart for restores with a server down.
//
// Outputs in options.out_dir: cycles.csv, cycles.jsonl, created.csv (every checkpoint.created),
// summary.json, and work/ (the agent's probe log, the store, per-process logs of failed cycles).
#pragma once

#include <fstream>
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
#include "bench/chaos/node_chaos.h"
#include "common/status.h"
#include "examples/reference_agent/probe_log.h"
#include "store/checkpoint_store.h"

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
  // jetstream: starts the cluster, the R3 inbox stream and consumer, and the store's streams
  // (agentckpt setup-store --replicas 3).
  agentckpt::Status SetupCluster();
  bool cluster() const { return o_.store == "jetstream"; }
  // The NATS URL of the sidecar (the cluster: every server, comma-separated).
  std::string NatsUrl() const;
  // One URL per server the harness listens on (one server unless cluster()).
  std::vector<std::string> NatsUrls() const;
  // The URL the agent connects to (it takes one: on the cluster a server that is up, it then
  // fails over to the servers the cluster announces).
  std::string AgentNatsUrl();
  // This cycle's node kill: planned (PlanNodeKill at the cycle's start, a "restore" one just
  // before the restart), done at the latest at the cycle's end, then recorded in `row`.
  void PlanNodeKill(int n, CycleRow* row);
  void EndNodeKills(int n, CycleRow* row);
  // Copies the tail of every nats-server log next to the failed cycle's other logs.
  void KeepNatsLogs(int n);
  // The kills' figures for summary.json; every kill also goes to work/node-kills.jsonl.
  nlohmann::json NodeKillSummary() const;
  // jetstream: reads back every checkpoint the agent record lists (a handle of the harness's
  // own, through every server) and sets row->listed_unreadable; a document newly found missing
  // or damaged is noted (the cycle fails).
  void AuditStore(CycleRow* row);
  // Logs of the processes that lived through a failed cycle are kept (see Run).
  void KeepLogsOf(int sidecar_incarnation, int agent_incarnation);
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
  // The last non-empty line of a process's log that contains `marker` ("" when none): what a
  // process that exited early said last.
  std::string LastLogLine(const std::string& who, int incarnation, const std::string& marker) const;
  // ": <what the agent said last>" when the current agent has exited and said why (an agent that
  // gives up writes an "[agent] ..." line); "" otherwise.
  std::string AgentLastWords();
  // "; its last error: <log line>" with the current sidecar's last error-level log line, if any
  // (cut at 600 characters); "" otherwise.
  std::string SidecarLastError();

  ChaosOptions o_;
  std::mt19937_64 rng_;
  std::string work_;
  int nats_port_ = 0, http_port_ = 0, emulator_port_ = 0;
  std::unique_ptr<ChildProcess> nats_, emulator_, sidecar_, agent_;
  std::unique_ptr<NodeChaos> nodes_;  // jetstream: the cluster
  std::mt19937_64 node_rng_;          // the node kills' own generator (seeded from the seed)
  int node_kills_planned_ = 0;
  size_t node_restarts_reported_ = 0;  // kills whose restart a row has shown
  std::string node_phase_;             // "restore": this cycle's kill is planned at the restart
  double node_delay_ms_ = 0;
  int node_victim_ = -1, node_fallback_ = 0, node_down_ms_ = 0;
  double restart_t0_ = 0, restore_end_t_ = 0;  // the last Restart's window
  std::string run_id_;                         // makes the feed's message ids unique per run
  std::unique_ptr<agentckpt::CheckpointStore> audit_store_;
  std::set<std::string> unreadable_ids_;  // listed checkpoints found unreadable so far
  std::set<std::string> keep_logs_;       // log files never removed
  std::ofstream events_log_;              // every message the observer recorded (events.jsonl)
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
  std::set<uint64_t> confirmed_acks_;    // inbox sequences whose ack the server confirmed
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
  std::map<std::string, int> feed_seen_count_;  // feed id -> times seen on the inbox subject
  std::map<std::string, int> feed_attempts_;    // feed id -> publishes the harness made
  int feed_sent_ = 0;
  int unattributed_ = 0;  // inbox messages outside any restore window nobody accounts for
};

}  // namespace chaos
