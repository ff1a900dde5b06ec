// ReferenceAgent: the reference agent's main loop. At start it asks its sidecar for the
// restoration and continues from the restored checkpoint (a cold start begins task 1); then it
// works through task after task, step by step: each step handles up to two inbox messages
// (result published, then acked), does the step's work, reports the tool call and the new
// context to the sidecar, and every 8th step asks for a pre_compaction checkpoint. Every side
// effect and every finished step is journaled (SideEffectJournal) before it is reported, and
// every update the sidecar answered 2xx is journaled after the reply ("ack", with the reply's
// journalSequence), so a harness can check that nothing acknowledged was lost. After a restart
// it continues from the sidecar's live context (the restored checkpoint plus its journal).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "examples/reference_agent/agent_inbox.h"
#include "examples/reference_agent/side_effect_journal.h"
#include "examples/reference_agent/sidecar_client.h"
#include "examples/reference_agent/task_model.h"

namespace reference_agent {

struct AgentOptions {
  std::string agent_id;
  std::string nats_url;
  std::string stream = "INBOX";
  std::string sidecar_url;
  std::string journal_path;
  int step_ms = 25;             // simulated tool and model time per step
  int precompaction_every = 8;  // steps between pre_compaction checkpoints (0: never)
  int max_tasks = 0;            // stop after this many tasks (0: never)
  int sidecar_wait_ms = 60000;  // how long to wait for an unreachable sidecar before giving up
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
  std::unique_ptr<SideEffectJournal> journal_;
  std::unique_ptr<AgentInbox> inbox_;
  std::optional<TaskModel> model_;
  int tasks_started_ = 0;
};

}  // namespace reference_agent
