// The chaos harness's options and per-cycle measurements.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace chaos {

struct ChaosOptions {
  int cycles = 20;
  std::string mode = "sigkill";  // sigkill | sigterm | mixed (each cycle one of the two)
  std::string store = "sqlite";  // sqlite | firestore (the emulator) | jetstream (3-node cluster)
  bool faults = false;           // Firestore fault injection (errors, delays, dropped replies)
  double fault_error_rate = 0.05, fault_delay_rate = 0.05, fault_drop_rate = 0.01;
  int fault_delay_ms = 200;
  uint64_t seed = 0;  // 0: derived from the clock (printed, so a run can be repeated)
  std::string out_dir;
  std::string bin_dir;  // holds agentckpt, reference_agent, firestore_emulator
  std::string nats_server = "nats-server";
  std::string agent_id = "agent-chaos";
  int min_run_ms = 150, max_run_ms = 900;  // agent work between restart and the next kill
  int step_ms = 25;                        // the agent's simulated work per step
  int period_s = 300;                      // CKPT_PERIOD_S (the default)
  std::string durability = "sync";         // CKPT_DURABILITY: sync | async | memory
  int precompaction_every = 0;             // the agent's pre_compaction requests (0: none)
  int lease_ttl_s = 0;                     // CKPT_LEASE_TTL_S (0: the sidecar's default)
  bool timing_targets = true;              // include the recovery-time targets in the exit code
  // Every second agent start gets a crash point (the four points around a write call in turn):
  // the cycle that follows waits for the agent to SIGKILL itself there instead of killing it at
  // a random moment.
  bool injected_crashes = true;
  double sla_ms = 30000, sidecar_p99_target_ms = 250;
  // jetstream: each cycle, with probability 1/2, one nats-server of the three is SIGKILLed too
  // (every third such kill the leader of the agent-record stream) and restarted node_down_min_ms
  // to node_down_max_ms later, at the latest at the end of the next cycle.
  bool node_kills = true;
  int node_down_min_ms = 300, node_down_max_ms = 5000;
};

// One kill-and-restart cycle. Times are milliseconds.
struct CycleRow {
  int cycle = 0;
  std::string signal;                // SIGKILL | SIGTERM
  std::string target;                // agent | sidecar | both
  int run_ms = 0;                    // agent work time before the kill
  int fed = 0;                       // inbox messages published this cycle
  int64_t newest_confirmed_seq = 0;  // newest checkpoint.created seen before the kill
  int64_t restored_seq = -1;         // checkpoint the restart continued from
  std::string restored_id;
  std::string restore_source;    // startup | post | get (the agent reused the start-up restore)
  int confirmed_lost = 0;        // confirmed checkpoints newer than the one restored
  double recovery_ms = -1;       // restart -> checkpoint.restored (sidecar restarts, POST restores)
  double restore_total_ms = -1;  // the restore's own totalMs
  nlohmann::json restore_phases_ms = nlohmann::json::object();  // its loadMs, replayMs, ...
  double agent_resume_ms = -1;  // agent restart -> agent working from the restored state
  int64_t steps_lost = 0;       // steps the agent finished after the restored checkpoint
  double work_lost_ms = 0;      // from the last acknowledged update kept to the kill
  int acked_updates = 0;        // updates answered 2xx since the previous restart, before this one
  int acked_lost = 0;           // of those, not in the restored context
  int64_t restored_journal_seq = -1;  // the journal sequence the sidecar's restore reached
  int msgs_after_checkpoint = 0;      // inbox messages the dead agent handled after the checkpoint
  int replay_handled = 0, replay_pending = 0;
  int duplicates = 0;           // executions in the sink of a key executed before
  std::string injected_crash;   // the write-call point the agent crashed at ("": none)
  int replay_side_effects = 0;  // application-subject messages not from the agent or the feed
  int app_msgs_in_window = 0;   // all application-subject messages during the restore
  // Both-kill cycles: "yes" | "no" | "" (not measured) | "failover": on the cluster, a change no
  // restore can make (nothing delivered; the ack floor lower, or raised only over acks the
  // server had confirmed to the agent before the crash; more messages pending; fewer counted as
  // redelivered) while a nats-server had just been killed or restarted: a new consumer leader of
  // nats-server 2.9 counts from its own copy of the state. Not counted as changed by the
  // restore; the two states are in consumer_shift.
  std::string consumer_unchanged;
  std::string consumer_shift;
  std::string pre_shutdown;          // SIGTERM: "durable" | "not-restored" | "missing" | ""
  int sidecar_exit = -1;             // SIGTERM: the sidecar's exit code
  bool resumed_from_restore = true;  // the agent continued at the restored checkpoint's step
  // jetstream (3-node cluster): nats-servers down at some moment between the restart and the
  // end of the restore (0 or 1); the server SIGKILLed in this cycle ("n2"; "": none), whether it
  // led the agent-record stream then, the moment planned for it (work | restore | end); the
  // server restarted in this cycle ("": none).
  int nodes_down = 0;
  std::string node_kill;
  bool node_kill_leader = false;
  std::string node_kill_phase;
  std::string node_restart;
  // jetstream: after the cycle, the checkpoints the agent record lists whose document cannot be
  // read back (missing or not matching), -1 when the store could not be read then.
  int listed_unreadable = -1;
  bool ok = true;
  std::string note;

  nlohmann::json ToJson() const;
  static std::string CsvHeader();
  std::string ToCsv() const;
};

}  // namespace chaos
