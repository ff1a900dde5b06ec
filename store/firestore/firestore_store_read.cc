// FirestoreStore: the read path (queries, GetLatestVerified, Get*, List).
#include <limits>
#include <set>

#include "checkpoint/checkpoint_json.h"
#include "common/ids.h"
#include "common/json_member.h"
#include "common/status_macros.h"
#include "common/time_format.h"
#include "store/firestore/firestore_store.h"
#include "store/firestore/firestore_value.h"

namespace agentckpt {
namespace {

using nlohmann::json;

constexpr int kLatestFirstBatch = 2;  // newest + one fallback in the first request
constexpr int kLatestNextBatch = 10;
constexpr int kListingLimit = 1000;

std::string LastSegment(const std::string& name) {
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

json OrderBySequenceDesc() {
  return json::array({{{"field", {{"fieldPath", "sequenceNumber"}}}, {"direction", "DESCENDING"}}});
}

json SequenceFilter(const char* op, int64_t value) {
  return {{"fieldFilter",
           {{"field", {{"fieldPath", "sequenceNumber"}}},
            {"op", op},
            {"value", {{"integerValue", std::to_string(value)}}}}}};
}

json Select(std::initializer_list<const char*> names) {
  json fields = json::array();
  for (const char* n : names) fields.push_back({{"fieldPath", n}});
  return {{"fields", fields}};
}

}  // namespace

StatusOr<std::vector<json>> FirestoreStore::RunSnapshotQuery(const std::string& agent_id,
                                                             json structured_query) {
  return RunQueryIn(agent_id, "snapshots", std::move(structured_query));
}

StatusOr<std::vector<json>> FirestoreStore::RunQueryIn(const std::string& agent_id,
                                                       const std::string& collection,
                                                       json structured_query) {
  json from = {{"collectionId", collection}};
  std::string parent = DocumentsPath();
  if (agent_id.empty()) {
    from["allDescendants"] = true;
  } else {
    parent += "/checkpoints/" + agent_id;
  }
  structured_query["from"] = json::array({from});
  json body = {{"structuredQuery", std::move(structured_query)}};
  ASSIGN_OR_RETURN(json reply,
                   http_->Call("POST", ApiPath(parent + ":runQuery"), &body, nullptr, Hedge::kYes));
  if (!reply.is_array()) return InternalError("Firestore :runQuery reply is not an array");
  std::vector<json> docs;
  for (json& item : reply) {
    if (item.is_object() && item.contains("document")) docs.push_back(std::move(item["document"]));
  }
  return docs;
}

StatusOr<std::optional<json>> FirestoreStore::GetDocument(const std::string& name) {
  StatusOr<json> reply = http_->Call("GET", ApiPath(name), nullptr, nullptr, Hedge::kYes);
  if (reply.status().code() == StatusCode::kNotFound) return std::optional<json>();
  if (!reply.ok()) return reply.status();
  return std::optional<json>(std::move(reply).value());
}

StatusOr<FirestoreStore::Listing> FirestoreStore::ReadListing(const std::string& agent_id) {
  json query = {{"select", Select({"sequenceNumber"})},
                {"orderBy", OrderBySequenceDesc()},
                {"limit", kListingLimit}};
  ASSIGN_OR_RETURN(auto docs, RunSnapshotQuery(agent_id, std::move(query)));
  Listing listing;
  for (const json& d : docs) {
    auto seq = FirestoreValueToJson(d["fields"]["sequenceNumber"], "sequenceNumber");
    if (!seq.ok() || !seq->is_number_integer()) continue;
    listing[seq->get<int64_t>()] = LastSegment(JsonMemberOr(d, "name", std::string()));
  }
  return listing;
}

StatusOr<Checkpoint> FirestoreStore::DecodeSnapshot(const json& doc, const std::string& agent_id) {
  const std::string name = JsonMemberOr(doc, "name", std::string());
  const std::string id = LastSegment(name);
  if (!doc.contains("fields")) return DataLossError("snapshot " + id + " has no fields");
  ASSIGN_OR_RETURN(Checkpoint cp, CheckpointFromFirestoreFields(doc["fields"]));
  if (cp.agent_id != agent_id || cp.checkpoint_id != id) {
    return DataLossError("stored document " + cp.checkpoint_id + " (agent " + cp.agent_id +
                         ") does not match its path " + name);
  }
  return cp;
}

StatusOr<LatestVerified> FirestoreStore::GetLatestVerified(const std::string& agent_id) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  LatestVerified out;
  // Pages go by offset, not by "sequenceNumber < the last one seen": a damaged document whose
  // sequenceNumber does not parse (or is not an integer, which Firestore orders before every
  // number in a descending query) gives no sequence to continue below, and must not end the
  // search while good older documents exist. Names already seen are skipped (a checkpoint
  // written meanwhile shifts the pages by one).
  std::set<std::string> seen;
  int offset = 0;
  int batch = kLatestFirstBatch;
  while (true) {
    json query = {{"orderBy", OrderBySequenceDesc()}, {"limit", batch}};
    if (offset > 0) query["offset"] = offset;
    ASSIGN_OR_RETURN(auto docs, RunSnapshotQuery(agent_id, std::move(query)));
    for (const json& d : docs) {
      SkippedCheckpoint skip;
      skip.checkpoint_id = LastSegment(JsonMemberOr(d, "name", std::string()));
      if (!seen.insert(skip.checkpoint_id).second) continue;
      auto seq = FirestoreValueToJson(d["fields"]["sequenceNumber"], "sequenceNumber");
      if (seq.ok() && seq->is_number_integer()) skip.sequence_number = seq->get<int64_t>();
      StatusOr<Checkpoint> cp = DecodeSnapshot(d, agent_id);
      if (cp.ok()) {
        out.checkpoint = std::move(cp).value();
        return out;
      }
      skip.reason = cp.status().ToString();
      out.skipped.push_back(std::move(skip));
    }
    offset += static_cast<int>(docs.size());
    if (static_cast<int>(docs.size()) < batch) break;
    batch = kLatestNextBatch;
  }
  return NotFoundError("no checkpoint of agent " + agent_id + " verifies (" +
                       std::to_string(out.skipped.size()) + " skipped)");
}

StatusOr<Checkpoint> FirestoreStore::GetById(const std::string& agent_id,
                                             const std::string& checkpoint_id) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  if (!IsUuidV4(checkpoint_id)) {
    return NotFoundError("no checkpoint " + checkpoint_id + " for agent " + agent_id);
  }
  ASSIGN_OR_RETURN(auto doc, GetDocument(SnapshotName(agent_id, checkpoint_id)));
  if (!doc.has_value()) {
    return NotFoundError("no checkpoint " + checkpoint_id + " for agent " + agent_id);
  }
  return DecodeSnapshot(*doc, agent_id);
}

StatusOr<Checkpoint> FirestoreStore::GetBySequence(const std::string& agent_id, int64_t sequence) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  json query = {{"where", SequenceFilter("EQUAL", sequence)}, {"limit", 1}};
  ASSIGN_OR_RETURN(auto docs, RunSnapshotQuery(agent_id, std::move(query)));
  if (docs.empty()) {
    return NotFoundError("no checkpoint " + std::to_string(sequence) + " for agent " + agent_id);
  }
  return DecodeSnapshot(docs[0], agent_id);
}

StatusOr<std::vector<CheckpointInfo>> FirestoreStore::List(const std::string& agent_id, int limit) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  if (limit < 1) return std::vector<CheckpointInfo>();
  json query = {{"select", Select({"checkpointId", "agentId", "sequenceNumber", "timestamp",
                                   "triggerReason", "sizeBytes", "expireAt", "contentSha256"})},
                {"orderBy", OrderBySequenceDesc()},
                {"limit", limit}};
  ASSIGN_OR_RETURN(auto docs, RunSnapshotQuery(agent_id, std::move(query)));
  std::vector<CheckpointInfo> out;
  for (const json& d : docs) {
    StatusOr<CheckpointInfo> info = CheckpointInfoFromFirestoreDocument(d);
    if (!info.ok()) {
      CheckpointInfo damaged;  // listed anyway: List does not verify
      damaged.checkpoint_id = LastSegment(JsonMemberOr(d, "name", std::string()));
      damaged.agent_id = agent_id;
      out.push_back(std::move(damaged));
      continue;
    }
    out.push_back(std::move(info).value());
  }
  return out;
}

StatusOr<std::vector<std::string>> FirestoreStore::ListAgents() {
  constexpr int kPage = 1000;
  std::vector<std::string> ids;
  std::string after;  // the last document name of the previous page
  for (;;) {
    json query = {{"from", json::array({{{"collectionId", "agents"}}})},
                  {"select", Select({"__name__"})},
                  {"orderBy", json::array({{{"field", {{"fieldPath", "__name__"}}},
                                            {"direction", "ASCENDING"}}})},
                  {"limit", kPage}};
    if (!after.empty()) {
      query["where"] = {{"fieldFilter",
                         {{"field", {{"fieldPath", "__name__"}}},
                          {"op", "GREATER_THAN"},
                          {"value", {{"referenceValue", after}}}}}};
    }
    json body = {{"structuredQuery", std::move(query)}};
    ASSIGN_OR_RETURN(json reply, http_->Call("POST", ApiPath(DocumentsPath() + ":runQuery"), &body,
                                             nullptr, Hedge::kYes));
    if (!reply.is_array()) return InternalError("Firestore :runQuery reply is not an array");
    int page = 0;
    for (const json& item : reply) {
      if (!item.is_object() || !item.contains("document")) continue;
      ++page;
      std::string name = JsonMemberOr(item["document"], "name", std::string());
      if (name <= after) return InternalError("Firestore agents listing did not advance");
      after = std::move(name);
      std::string id = LastSegment(after);
      if (ValidateAgentId(id).ok()) ids.push_back(std::move(id));  // not agents/.ping
    }
    if (page < kPage) break;
  }
  return ids;
}

StatusOr<CheckpointInfo> CheckpointInfoFromFirestoreDocument(const json& doc) {
  ASSIGN_OR_RETURN(json f, FirestoreFieldsToJson(JsonMemberOr(doc, "fields", json()), ""));
  CheckpointInfo info;
  info.checkpoint_id = LastSegment(JsonMemberOr(doc, "name", std::string()));
  auto str = [&](const char* k) {
    return f.contains(k) && f[k].is_string() ? f[k].get<std::string>() : "";
  };
  auto num = [&](const char* k) -> int64_t {
    return f.contains(k) && f[k].is_number_integer() ? f[k].get<int64_t>() : 0;
  };
  auto time = [&](const char* k) -> int64_t {
    auto ms = ParseRfc3339Millis(str(k));
    return ms.ok() ? *ms : 0;
  };
  info.agent_id = str("agentId");
  info.sequence_number = num("sequenceNumber");
  info.timestamp_ms = time("timestamp");
  info.size_bytes = num("sizeBytes");
  info.expire_at_ms = time("expireAt");
  info.content_sha256 = str("contentSha256");
  auto trigger = ParseTriggerReason(str("triggerReason"));
  if (trigger.has_value()) info.trigger_reason = *trigger;
  return info;
}

}  // namespace agentckpt
