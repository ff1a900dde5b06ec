// JetStreamStore's read path: every read asks the stream leader for the agent record, then for
// the documents it lists.
#include <algorithm>

#include "checkpoint/canonical.h"
#include "common/ids.h"
#include "common/status_macros.h"
#include "store/jetstream/jetstream_store.h"

namespace agentckpt {

StatusOr<Checkpoint> JetStreamStore::ReadDocument(const std::string& agent_id,
                                                  const JsCheckpointRef& ref) {
  ASSIGN_OR_RETURN(std::optional<JsMessage> msg,
                   api_->GetLast(CheckpointsStream(), CheckpointSubject(agent_id, ref.checkpoint_id,
                                                                        ref.content_sha256)));
  if (!msg) {
    // A writer removes a document after the record that drops it: if the record no longer lists
    // it, it was pruned while this read ran.
    StatusOr<Record> now = ReadRecord(agent_id);
    if (now.ok() && std::none_of(now->rec.checkpoints.begin(), now->rec.checkpoints.end(),
                                 [&](const JsCheckpointRef& r) {
                                   return r.checkpoint_id == ref.checkpoint_id &&
                                          r.content_sha256 == ref.content_sha256;
                                 })) {
      return NotFoundError("checkpoint " + ref.checkpoint_id + " was pruned while it was read");
    }
    return DataLossError("checkpoint " + ref.checkpoint_id + " is listed but its document is gone");
  }
  ASSIGN_OR_RETURN(Checkpoint cp, VerifyDocumentJson(msg->data));
  if (cp.agent_id != agent_id || cp.checkpoint_id != ref.checkpoint_id ||
      cp.sequence_number != ref.sequence || cp.content_sha256 != ref.content_sha256) {
    return DataLossError("checkpoint " + ref.checkpoint_id +
                         " does not match what the agent record lists for it");
  }
  return cp;
}

StatusOr<LatestVerified> JetStreamStore::GetLatestVerified(const std::string& agent_id) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  ASSIGN_OR_RETURN(Record r, ReadRecord(agent_id));
  LatestVerified out;
  for (const JsCheckpointRef& ref : r.rec.checkpoints) {
    StatusOr<Checkpoint> cp = ReadDocument(agent_id, ref);
    if (cp.ok()) {
      out.checkpoint = std::move(cp).value();
      return out;
    }
    if (cp.status().code() == StatusCode::kUnavailable) return cp.status();
    out.skipped.push_back(
        SkippedCheckpoint{ref.checkpoint_id, ref.sequence, cp.status().ToString()});
  }
  return NotFoundError("no verified checkpoint for agent " + agent_id +
                       (out.skipped.empty()
                            ? std::string()
                            : " (" + std::to_string(out.skipped.size()) + " failed to verify)"));
}

StatusOr<Checkpoint> JetStreamStore::GetById(const std::string& agent_id,
                                             const std::string& checkpoint_id) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  ASSIGN_OR_RETURN(Record r, ReadRecord(agent_id));
  for (const JsCheckpointRef& ref : r.rec.checkpoints) {
    if (ref.checkpoint_id == checkpoint_id) return ReadDocument(agent_id, ref);
  }
  return NotFoundError("no checkpoint " + checkpoint_id + " for agent " + agent_id);
}

StatusOr<Checkpoint> JetStreamStore::GetBySequence(const std::string& agent_id, int64_t sequence) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  ASSIGN_OR_RETURN(Record r, ReadRecord(agent_id));
  for (const JsCheckpointRef& ref : r.rec.checkpoints) {
    if (ref.sequence == sequence) return ReadDocument(agent_id, ref);
  }
  return NotFoundError("no checkpoint at sequence " + std::to_string(sequence) + " for agent " +
                       agent_id);
}

StatusOr<std::vector<CheckpointInfo>> JetStreamStore::List(const std::string& agent_id, int limit) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  ASSIGN_OR_RETURN(Record r, ReadRecord(agent_id));
  std::vector<CheckpointInfo> out;
  for (const JsCheckpointRef& ref : r.rec.checkpoints) {
    if (static_cast<int>(out.size()) >= limit) break;
    out.push_back(ToCheckpointInfo(agent_id, ref));
  }
  return out;
}

StatusOr<AgentRecord> JetStreamStore::GetAgent(const std::string& agent_id) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  ASSIGN_OR_RETURN(Record r, ReadRecord(agent_id));
  return ToAgentRecord(r.rec);
}

StatusOr<std::vector<std::string>> JetStreamStore::ListAgents() {
  const std::string head = prefix_ + ".agents.";
  ASSIGN_OR_RETURN(std::vector<std::string> subjects, api_->Subjects(AgentsStream(), head + "*"));
  std::vector<std::string> out;
  for (const std::string& s : subjects) {
    if (s.rfind(head, 0) == 0) out.push_back(s.substr(head.size()));
  }
  return out;
}

}  // namespace agentckpt
