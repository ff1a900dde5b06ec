#include "nats/subjects.h"

namespace agentckpt::subjects {

std::string AgentPrefix(const std::string& agent_id) { return "agent." + agent_id + "."; }
std::string AgentAll(const std::string& agent_id) { return AgentPrefix(agent_id) + ">"; }
std::string Status(const std::string& agent_id) { return AgentPrefix(agent_id) + "status"; }
std::string CheckpointPrefix(const std::string& agent_id) {
  return AgentPrefix(agent_id) + "checkpoint.";
}
std::string CheckpointAll(const std::string& agent_id) { return CheckpointPrefix(agent_id) + ">"; }
std::string CheckpointEvent(const std::string& agent_id, const std::string& event) {
  return CheckpointPrefix(agent_id) + event;
}
std::string CheckpointCreate(const std::string& agent_id) {
  return CheckpointEvent(agent_id, "create");
}
std::string CheckpointCreated(const std::string& agent_id) {
  return CheckpointEvent(agent_id, "created");
}
std::string CheckpointFailed(const std::string& agent_id) {
  return CheckpointEvent(agent_id, "failed");
}
std::string CheckpointRestore(const std::string& agent_id) {
  return CheckpointEvent(agent_id, "restore");
}
std::string CheckpointRestored(const std::string& agent_id) {
  return CheckpointEvent(agent_id, "restored");
}
std::string GatePrefix(const std::string& agent_id) { return AgentPrefix(agent_id) + "gate."; }
std::string GateResolve(const std::string& agent_id) { return GatePrefix(agent_id) + "resolve"; }
std::string GateRequested(const std::string& agent_id) {
  return GatePrefix(agent_id) + "requested";
}
std::string GateResolved(const std::string& agent_id) { return GatePrefix(agent_id) + "resolved"; }
std::string GateConsumed(const std::string& agent_id) { return GatePrefix(agent_id) + "consumed"; }
std::string InboxAll(const std::string& agent_id) { return AgentPrefix(agent_id) + "inbox.>"; }

}  // namespace agentckpt::subjects
