// ReferenceAgent: the reference agent's main loop. At start it asks its sidecar for the
// restoration and continues from the restored checkpoint (a cold start begins task 1); then it
// works through task after task, step by step: each step handles up to two inbox messages, does
// the step's work, reports the tool call and the new context to the sidecar, and every 8th step
// (by default; the chaos harness uses 0) asks for a pre_compaction checkpoint.
//
// Handling a message is a write call through the sidecar's tool-call ledger
// (docs/tool-call-ledger.md): begin with the key "msg:<stream sequence>"; 201 -> execute the
// effect in the sink (effect_sink.h), end, then ack the message; 200 -> the effect is recorded as
// done, skip it and ack; 409 OUTCOME_UNKNOWN -> ask the sink whether the effect happened,
// reconcile accordingly, begin again. The agent keeps nothing of its own across a crash: the
// ledger alone keeps an effect from being done twice.
//
// A harness can inject a crash (the agent SIGKILLs itself) the N-th time a write call reaches one
// point: before begin, after begin, after the effect before end, or after end. What the agent did is
// written to a probe log for the harness (probe_log.h); the agent never reads it.
// After a restart it continues from the sidecar's live context (the restored checkpoint plus its
// journal).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "examples/reference_agent/agent_inbox.h"
#include "examples/reference_agent/probe_log.h"
#include "examples/reference_agent/sidecar_client.h"
#include "examples/reference_agent/task_model.h"

namespace reference_agent {

struct AgentOptions {
  std::string agent_id;
  std::string nats_url;
  std::string stream = "INBOX";
  std::string sidecar_url;
  std::string probe_log_path;
  int step_ms = 25;             // simulated tool and model time per step
  int precompaction_every = 8;  // steps between pre_compaction checkpoints (0: never)
  int max_tasks = 0;            // stop after this many tasks (0: never)
  int sidecar_wait_ms = 60000;  // how long to wait for an unreachable sidecar before giving up
  // Crash injection: SIGKILL itself the `crash_on_call`-th time (1-based) a write call reaches
  // `crash_at` (before_begin | after_begin | after_effect | after_end; empty: never). A call
  // that the ledger replays never reaches the points after begin.
  std::string crash_at;
  int crash_on_call = 1;
};

class ReferenceAgent {
 public:
  // `stop` is set by the SIGTERM handler; the agent stops at the next step boundary.
  ReferenceAgent(AgentOptions options, const std::atomic<bool>* stop);

  // Runs until stopped (0), the task limit is reached (0), or a failure (1, reason on stderr).
  int Run();

 private:
  // Waits for the sidecar, gets the restoration and the restored checkpoint, journals "resume".
  agentckpt::Status Restore();
  // One step as described above.
  agentckpt::Status Step();
  void HandleInbox();
  // The message's effect as one write call through the ledger (see the file comment).
  agentckpt::Status WriteThroughLedger(const InboxMessage& m, const std::string& key);
  // SIGKILLs this process if `point` of the current write call is the injected crash.
  void MaybeCrash(const char* point, const std::string& key);
  // Sends a request, retrying while the sidecar is unreachable or answers 503, until
  // `sidecar_wait_ms` passes or a stop is requested (then the last reply is returned).
  HttpReply CallSidecar(const std::string& method, const std::string& path,
                        const nlohmann::json& body = nullptr);
  // Sends a context update; on 2xx journals {"k":"ack", what, journalSequence, durable, global}.
  agentckpt::Status SendUpdate(const std::string& method, const std::string& path,
                               const nlohmann::json& body, int want_status, const char* what);

  AgentOptions options_;
  const std::atomic<bool>* stop_;
  SidecarClient sidecar_;
  std::unique_ptr<ProbeLog> probe_;
  std::unique_ptr<AgentInbox> inbox_;
  std::optional<TaskModel> model_;
  int tasks_started_ = 0;
  int crash_point_reached_ = 0;  // times this process reached AgentOptions::crash_at
};

}  // namespace reference_agent
