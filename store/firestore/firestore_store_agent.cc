// FirestoreStore: reading the agent record (agents/{agentId}): its fields for the write path
// (AgentState) and for GetAgent.
#include "common/ids.h"
#include "common/status_macros.h"
#include "common/time_format.h"
#include "store/firestore/firestore_store.h"
#include "store/firestore/firestore_value.h"

namespace agentckpt {

using nlohmann::json;

namespace {

// The lease fields of an agents/{agentId} document (already decoded from Firestore values);
// absent or mistyped fields leave the outputs as they are (no lease).
void ReadLeaseFields(const json& f, std::string* holder, int64_t* epoch, int64_t* expires_at_ms) {
  if (f.contains("leaseHolder") && f["leaseHolder"].is_string()) {
    *holder = f["leaseHolder"].get<std::string>();
  }
  if (f.contains("leaseEpoch") && f["leaseEpoch"].is_number_integer()) {
    *epoch = f["leaseEpoch"].get<int64_t>();
  }
  if (f.contains("leaseExpiresAtMs") && f["leaseExpiresAtMs"].is_number_integer()) {
    *expires_at_ms = f["leaseExpiresAtMs"].get<int64_t>();
  }
}

}  // namespace

StatusOr<FirestoreStore::AgentState> FirestoreStore::ReadAgent(const std::string& agent_id) {
  ASSIGN_OR_RETURN(auto doc, GetDocument(AgentName(agent_id)));
  AgentState state;
  if (!doc.has_value()) return state;
  state.exists = true;
  state.update_time = doc->value("updateTime", "");
  ASSIGN_OR_RETURN(json fields, FirestoreFieldsToJson(doc->value("fields", json::object()), ""));
  if (fields.contains("lastSequence") && fields["lastSequence"].is_number_integer()) {
    state.last_sequence = fields["lastSequence"].get<int64_t>();
  }
  ReadLeaseFields(fields, &state.lease_holder, &state.lease_epoch, &state.lease_expires_at_ms);
  auto integer = [&fields](const char* key) -> int64_t {
    return fields.contains(key) && fields[key].is_number_integer() ? fields[key].get<int64_t>() : 0;
  };
  state.journal_sequence = integer("journalSequence");
  state.journal_compacted = integer("journalCompactedThrough");
  if (fields.contains("journalFences") && fields["journalFences"].is_array()) {
    for (const json& f : fields["journalFences"]) {
      if (f.is_number_integer()) state.journal_fences.push_back(f.get<int64_t>());
    }
  }
  return state;
}

StatusOr<AgentRecord> FirestoreStore::GetAgent(const std::string& agent_id) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  AgentRecord record;
  record.agent_id = agent_id;
  ASSIGN_OR_RETURN(auto doc, GetDocument(AgentName(agent_id)));
  if (!doc.has_value()) return record;
  auto fields = FirestoreFieldsToJson(doc->value("fields", json::object()), "");
  if (!fields.ok()) return DataLossError("agents/" + agent_id + ": " + fields.status().message());
  if ((*fields).contains("status") && (*fields)["status"].is_string()) {
    record.status = (*fields)["status"].get<std::string>();
  }
  if ((*fields).contains("lastSequence") && (*fields)["lastSequence"].is_number_integer()) {
    record.last_sequence = (*fields)["lastSequence"].get<int64_t>();
  }
  if ((*fields).contains("updatedAt") && (*fields)["updatedAt"].is_string()) {
    auto ms = ParseRfc3339Millis((*fields)["updatedAt"].get<std::string>());
    if (ms.ok()) record.updated_at_ms = *ms;
  }
  ReadLeaseFields(*fields, &record.lease_holder, &record.lease_epoch, &record.lease_expires_at_ms);
  return record;
}

}  // namespace agentckpt
