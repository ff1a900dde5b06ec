// FirestoreStore: the write path (Put, Prune, DeleteExpired, agent status). Opening is in
// firestore_store_open.cc, reading the agent record in firestore_store_agent.cc.
#include "store/firestore/firestore_store.h"

#include <algorithm>

#include "checkpoint/checkpoint_json.h"
#include "common/ids.h"
#include "common/json_member.h"
#include "common/status_macros.h"
#include "common/time_format.h"
#include "store/backend_rules.h"
#include "store/firestore/firestore_value.h"

namespace agentckpt {
namespace {

using nlohmann::json;

constexpr int kMaxWritesPerCommit = 500;  // Firestore's limit
constexpr int kConflictRounds = 3;

bool IsConflict(const Status& s) {
  return s.code() == StatusCode::kAlreadyExists || s.code() == StatusCode::kFailedPrecondition;
}

json TimestampValue(int64_t ms) { return json{{"timestampValue", FormatRfc3339Millis(ms)}}; }
json IntegerValue(int64_t v) { return json{{"integerValue", std::to_string(v)}}; }
json StringValue(const std::string& s) { return json{{"stringValue", s}}; }

}  // namespace

json FirestoreStore::AgentPrecondition(const AgentState& agent) {
  return agent.exists ? json{{"updateTime", agent.update_time}} : json{{"exists", false}};
}

std::string FirestoreStore::WrittenUpdateTime(const json& reply, size_t index) {
  const json& results = reply["writeResults"];
  if (!results.is_array() || results.size() <= index) return "";
  const json& r = results[index];
  return r.contains("updateTime") && r["updateTime"].is_string()
             ? r["updateTime"].get<std::string>()
             : "";
}

StatusOr<json> FirestoreStore::Commit(const json& writes, CallInfo* info) {
  json body = {{"writes", writes}};
  return http_->Call("POST", ApiPath(DocumentsPath() + ":commit"), &body, info, Hedge::kYes);
}

StatusOr<PutResult> FirestoreStore::Put(const SealedCheckpoint& sealed, const PutOptions& opts) {
  const Checkpoint& cp = sealed.doc;
  RETURN_IF_ERROR(CheckPutArguments(sealed, opts));
  if (!IsUuidV4(cp.checkpoint_id)) return InvalidArgumentError("checkpointId: not a UUID v4");
  ASSIGN_OR_RETURN(json fields, CheckpointToFirestoreFields(sealed));
  std::lock_guard<std::mutex> lock(write_mu_);
  StatusOr<PutResult> result = PutLocked(sealed, fields, opts);
  if (!result.ok()) {
    // The store's state is not known any more: read it afresh next time.
    agent_cache_.erase(cp.agent_id);
    listing_cache_.erase(cp.agent_id);
  }
  return result;
}

StatusOr<PutResult> FirestoreStore::PutLocked(const SealedCheckpoint& sealed, const json& fields,
                                              const PutOptions& opts) {
  const Checkpoint& cp = sealed.doc;
  const int keep = opts.keep;
  const std::string snapshot = SnapshotName(cp.agent_id, cp.checkpoint_id);
  Status last_conflict;
  for (int round = 0; round < kConflictRounds; ++round) {
    auto agent_it = agent_cache_.find(cp.agent_id);
    bool fresh_read = agent_it == agent_cache_.end();
    if (fresh_read) {
      ASSIGN_OR_RETURN(AgentState fresh, ReadAgent(cp.agent_id));
      agent_it = agent_cache_.emplace(cp.agent_id, std::move(fresh)).first;
    }
    const AgentState agent = agent_it->second;
    if (opts.lease.has_value() &&
        (agent.lease_holder != opts.lease->holder || agent.lease_epoch != opts.lease->epoch)) {
      if (!fresh_read) {  // the cache may be behind: judge on the stored record
        agent_cache_.erase(cp.agent_id);
        ASSIGN_OR_RETURN(AgentState reread, ReadAgent(cp.agent_id));
        agent_cache_[cp.agent_id] = reread;
        if (reread.lease_holder == opts.lease->holder && reread.lease_epoch == opts.lease->epoch) {
          continue;
        }
      }
      const AgentState& now = agent_cache_[cp.agent_id];
      return FailedPreconditionError(
          LeaseLostMessage(*opts.lease, now.lease_holder, now.lease_epoch));
    }
    if (cp.sequence_number <= agent.last_sequence) {
      return AlreadyExistsError("sequence " + std::to_string(cp.sequence_number) + " of agent " +
                                cp.agent_id + " is not above the last written sequence " +
                                std::to_string(agent.last_sequence) + ": another writer got there");
    }
    auto listing_it = listing_cache_.find(cp.agent_id);
    if (listing_it == listing_cache_.end()) {
      ASSIGN_OR_RETURN(Listing fresh, ReadListing(cp.agent_id));
      listing_it = listing_cache_.emplace(cp.agent_id, std::move(fresh)).first;
    }
    Listing after = listing_it->second;
    after[cp.sequence_number] = cp.checkpoint_id;
    std::vector<std::pair<int64_t, std::string>> doomed;
    int index = 0;
    for (auto it = after.rbegin(); it != after.rend(); ++it, ++index) {
      if (index >= keep) doomed.emplace_back(it->first, it->second);
    }
    if (static_cast<int>(doomed.size()) + 2 > kMaxWritesPerCommit) {
      doomed.resize(kMaxWritesPerCommit - 2);  // the rest goes in the next Put or Prune
    }

    json writes = json::array();
    writes.push_back({{"update", {{"name", snapshot}, {"fields", fields}}},
                      {"currentDocument", {{"exists", false}}}});
    json agent_fields = {{"agentId", StringValue(cp.agent_id)},
                         {"lastSequence", IntegerValue(cp.sequence_number)},
                         {"updatedAt", TimestampValue(options_.env->NowUnixMillis())}};
    json mask = {"agentId", "lastSequence", "updatedAt"};
    const int64_t journal_sequence =
        std::max(agent.journal_sequence, cp.journal ? cp.journal->sequence : 0);
    if (journal_sequence > agent.journal_sequence) {
      agent_fields["journalSequence"] = IntegerValue(journal_sequence);
      mask.push_back("journalSequence");
    }
    // The journal entries no retained checkpoint needs go in this commit (what fits).
    json journal_deletes = json::array();
    std::vector<std::string> overflow;
    int64_t journal_deleted = 0;
    int64_t compacted = agent.journal_compacted;
    if (opts.journal_compact_through > 0) {
      compacted = AddCompaction(cp.agent_id, agent, opts.journal_compact_through,
                                static_cast<size_t>(kMaxWritesPerCommit) - 2 - doomed.size(),
                                &journal_deletes, &overflow, &journal_deleted);
      if (compacted > agent.journal_compacted) {
        agent_fields["journalCompactedThrough"] = IntegerValue(compacted);
        mask.push_back("journalCompactedThrough");
      }
    }
    json agent_write = {{"update", {{"name", AgentName(cp.agent_id)}, {"fields", agent_fields}}},
                        {"updateMask", {{"fieldPaths", mask}}}};
    agent_write["currentDocument"] = AgentPrecondition(agent);
    writes.push_back(std::move(agent_write));
    for (const auto& [seq, id] : doomed) {
      writes.push_back({{"delete", SnapshotName(cp.agent_id, id)}});
    }
    for (json& d : journal_deletes) writes.push_back(std::move(d));

    CallInfo info;
    StatusOr<json> reply = Commit(writes, &info);
    if (reply.ok()) {
      AgentState& cached = agent_cache_[cp.agent_id];
      cached.exists = true;
      cached.last_sequence = cp.sequence_number;
      cached.journal_sequence = journal_sequence;
      cached.journal_compacted = compacted;
      cached.update_time = WrittenUpdateTime(*reply, 1);
      if (cached.update_time.empty()) agent_cache_.erase(cp.agent_id);
      for (const auto& d : doomed) after.erase(d.first);
      listing_cache_[cp.agent_id] = std::move(after);
      // Entries beyond one commit's 500 writes: the checkpoint covers them, so deleting them
      // outside its commit is safe; a failure leaves them for the next Put.
      if (!overflow.empty()) {
        StatusOr<int> more = DeleteDocuments(overflow);
        if (!more.ok()) {
          journal_deleted -= static_cast<int64_t>(overflow.size());
        } else {
          std::lock_guard<std::mutex> journal_lock(journal_mu_);
          JournalHead& head = journal_cache_[cp.agent_id];
          head.compacted = std::max(head.compacted, opts.journal_compact_through);
        }
      }
      PutResult result{static_cast<int>(doomed.size())};
      result.journal_compacted = journal_deleted;
      return result;
    }
    if (!IsConflict(reply.status())) return reply.status();
    if (info.maybe_applied_earlier) {
      // An earlier attempt may have committed: the conflict could be our own write.
      ASSIGN_OR_RETURN(auto existing, GetDocument(snapshot));
      if (existing.has_value()) {
        auto sha = (*existing)["fields"]["contentSha256"]["stringValue"];
        if (sha.is_string() && sha.get<std::string>() == cp.content_sha256) {
          agent_cache_.erase(cp.agent_id);
          listing_cache_.erase(cp.agent_id);
          PutResult result{static_cast<int>(doomed.size())};
          result.journal_compacted = journal_deleted;
          return result;
        }
      }
    }
    last_conflict = reply.status();
    agent_cache_.erase(cp.agent_id);
    listing_cache_.erase(cp.agent_id);
  }
  return AlreadyExistsError("checkpoint " + cp.checkpoint_id + " at sequence " +
                            std::to_string(cp.sequence_number) + " of agent " + cp.agent_id +
                            " conflicts with another writer: " + last_conflict.message());
}

StatusOr<int> FirestoreStore::DeleteDocuments(const std::vector<std::string>& names) {
  int deleted = 0;
  for (size_t start = 0; start < names.size(); start += kMaxWritesPerCommit) {
    json writes = json::array();
    size_t end = std::min(names.size(), start + kMaxWritesPerCommit);
    for (size_t i = start; i < end; ++i) writes.push_back({{"delete", names[i]}});
    ASSIGN_OR_RETURN(json reply, Commit(writes));
    deleted += static_cast<int>(end - start);
  }
  return deleted;
}

StatusOr<int> FirestoreStore::Prune(const std::string& agent_id, int keep) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  if (keep < 1) return InvalidArgumentError("keep must be at least 1");
  std::lock_guard<std::mutex> lock(write_mu_);
  listing_cache_.erase(agent_id);  // the next Put reads the listing afresh
  int deleted = 0;
  while (true) {
    // The checkpoints beyond the newest `keep`, a batch at a time.
    json query = {
        {"select", {{"fields", {{{"fieldPath", "sequenceNumber"}}}}}},
        {"orderBy", {{{"field", {{"fieldPath", "sequenceNumber"}}}, {"direction", "DESCENDING"}}}},
        {"offset", keep},
        {"limit", kMaxWritesPerCommit}};
    ASSIGN_OR_RETURN(auto docs, RunSnapshotQuery(agent_id, std::move(query)));
    std::vector<std::string> names;
    for (const json& d : docs) names.push_back(JsonMemberOr(d, "name", std::string()));
    ASSIGN_OR_RETURN(int n, DeleteDocuments(names));
    deleted += n;
    if (static_cast<int>(docs.size()) < kMaxWritesPerCommit) break;
  }
  return deleted;
}

StatusOr<int> FirestoreStore::DeleteExpired(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(write_mu_);
  listing_cache_.clear();
  int deleted = 0;
  while (true) {
    json query = {{"select", {{"fields", {{{"fieldPath", "sequenceNumber"}}}}}},
                  {"where",
                   {{"fieldFilter",
                     {{"field", {{"fieldPath", "expireAt"}}},
                      {"op", "LESS_THAN_OR_EQUAL"},
                      {"value", TimestampValue(now_ms)}}}}},
                  {"limit", kMaxWritesPerCommit}};
    ASSIGN_OR_RETURN(auto docs, RunSnapshotQuery("", std::move(query)));
    std::vector<std::string> names;
    for (const json& d : docs) names.push_back(JsonMemberOr(d, "name", std::string()));
    ASSIGN_OR_RETURN(int n, DeleteDocuments(names));
    deleted += n;
    if (static_cast<int>(docs.size()) < kMaxWritesPerCommit) break;
  }
  return deleted;
}

Status FirestoreStore::SetAgentStatus(const std::string& agent_id, const std::string& status,
                                      int64_t now_ms) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  std::lock_guard<std::mutex> lock(write_mu_);
  Status last_conflict;
  for (int round = 0; round < kConflictRounds; ++round) {
    auto it = agent_cache_.find(agent_id);
    if (it == agent_cache_.end()) {
      ASSIGN_OR_RETURN(AgentState fresh, ReadAgent(agent_id));
      it = agent_cache_.emplace(agent_id, std::move(fresh)).first;
    }
    AgentState agent = it->second;
    json write = {{"update",
                   {{"name", AgentName(agent_id)},
                    {"fields",
                     {{"agentId", StringValue(agent_id)},
                      {"status", StringValue(status)},
                      {"updatedAt", TimestampValue(now_ms)}}}}},
                  {"updateMask", {{"fieldPaths", {"agentId", "status", "updatedAt"}}}}};
    write["currentDocument"] = AgentPrecondition(agent);
    StatusOr<json> reply = Commit(json::array({write}));
    if (reply.ok()) {
      agent.exists = true;
      agent.update_time = WrittenUpdateTime(*reply, 0);
      if (agent.update_time.empty()) {
        agent_cache_.erase(agent_id);
      } else {
        agent_cache_[agent_id] = agent;
      }
      return OkStatus();
    }
    agent_cache_.erase(agent_id);
    // A conflict: the record changed since it was read (a lease change, or this very write
    // applied by an attempt whose reply was lost): read it again and set the status again.
    if (!IsConflict(reply.status())) return reply.status();
    last_conflict = reply.status();
  }
  return UnavailableError("status of agent " + agent_id +
                          ": the agent record kept changing: " + last_conflict.message());
}

}  // namespace agentckpt
