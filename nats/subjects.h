// The NATS subjects agentckpt uses for one agent, in one place. These names are the wire
// contract described in docs/http-api.md, docs/schemas and the README: changing one breaks every
// agent and operator tool that listens. All functions are pure and thread-safe; none checks
// `agent_id` (the sidecar and the CLI validate it before they build a subject).
#pragma once

#include <string>

namespace agentckpt::subjects {

// "agent.<agent_id>.": the prefix every subject of the agent starts with.
std::string AgentPrefix(const std::string& agent_id);

// "agent.<agent_id>.>": every subject of the agent (status, checkpoint events, inbox).
std::string AgentAll(const std::string& agent_id);

// "agent.<agent_id>.status": the sidecar's lifecycle events (starting, restoring, ready...).
std::string Status(const std::string& agent_id);

// "agent.<agent_id>.checkpoint.": the prefix of the sidecar's checkpoint subjects.
std::string CheckpointPrefix(const std::string& agent_id);

// "agent.<agent_id>.checkpoint.>": every checkpoint request and event of the agent.
std::string CheckpointAll(const std::string& agent_id);

// "agent.<agent_id>.checkpoint.create": request a checkpoint (request/reply).
std::string CheckpointCreate(const std::string& agent_id);

// "agent.<agent_id>.checkpoint.created": event, a checkpoint was written and verified.
std::string CheckpointCreated(const std::string& agent_id);

// "agent.<agent_id>.checkpoint.failed": event, a checkpoint or a restore failed.
std::string CheckpointFailed(const std::string& agent_id);

// "agent.<agent_id>.checkpoint.restore": request a restoration prompt (request/reply).
std::string CheckpointRestore(const std::string& agent_id);

// "agent.<agent_id>.checkpoint.restored": event, a restoration prompt was built.
std::string CheckpointRestored(const std::string& agent_id);

// "agent.<agent_id>.checkpoint.<event>": the subject of a checkpoint event named "created",
// "failed", "restored"... (the part after "checkpoint.").
std::string CheckpointEvent(const std::string& agent_id, const std::string& event);

// --- approval gates (docs/gates.md) ---
// "agent.<agent_id>.gate.": the prefix of the gate subjects.
std::string GatePrefix(const std::string& agent_id);
// "agent.<agent_id>.gate.resolve": resolve a gate (request/reply, answered with the gate).
std::string GateResolve(const std::string& agent_id);
// "agent.<agent_id>.gate.requested": event, a gate was requested (the agent waits).
std::string GateRequested(const std::string& agent_id);
// "agent.<agent_id>.gate.resolved": event, a gate was decided (approved, rejected or expired).
std::string GateResolved(const std::string& agent_id);
// "agent.<agent_id>.gate.consumed": event, the agent marked a decision consumed.
std::string GateConsumed(const std::string& agent_id);
// --- end approval gates ---

// "agent.<agent_id>.inbox.>": the agent's inbox, the default subjects of the JetStream stream
// that `agentckpt setup-stream` creates and that replay reads.
std::string InboxAll(const std::string& agent_id);

// "agent.{agent}.inbox.>": InboxAll with the "{agent}" placeholder that setup-stream's
// --subjects expands.
inline constexpr char kInboxTemplate[] = "agent.{agent}.inbox.>";

}  // namespace agentckpt::subjects
