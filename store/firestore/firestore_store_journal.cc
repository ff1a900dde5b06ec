// FirestoreStore's write-ahead journal (docs/journal.md): one document per entry under
// checkpoints/{agentId}/journal, created with exists=false in one :commit per append, fenced by
// the fence document a lease change writes at the first free sequence (see firestore_store.h).
#include <algorithm>
#include <cstdio>
#include <set>

#include "common/ids.h"
#include "common/json_member.h"
#include "common/status_macros.h"
#include "store/firestore/firestore_store.h"
#include "store/firestore/firestore_value.h"

namespace agentckpt {
namespace {

using nlohmann::json;

json Integer(int64_t v) { return json{{"integerValue", std::to_string(v)}}; }

int64_t SequenceOfName(const std::string& name) {
  size_t slash = name.rfind('/');
  const std::string id = slash == std::string::npos ? name : name.substr(slash + 1);
  if (id.empty() || id.size() > 20 || id.find_first_not_of("0123456789") != std::string::npos) {
    return 0;
  }
  return std::stoll(id);
}

// The decoded fields of a journal document; an empty object when they do not decode.
json FieldsOf(const json& doc) {
  StatusOr<json> f = FirestoreFieldsToJson(JsonMemberOr(doc, "fields", json()), "");
  return f.ok() ? std::move(f).value() : json::object();
}

bool IsFence(const json& fields) { return JsonMemberOr(fields, "fence", false); }

json OrderBySequence(const char* direction) {
  return json::array({{{"field", {{"fieldPath", "sequence"}}}, {"direction", direction}}});
}

bool IsConflict(const Status& s) {
  return s.code() == StatusCode::kAlreadyExists || s.code() == StatusCode::kFailedPrecondition;
}

Status CheckBatch(const std::string& agent_id, const std::vector<JournalEntry>& entries) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].agent_id != agent_id) {
      return InvalidArgumentError("journal entry " + std::to_string(entries[i].sequence) +
                                  " belongs to another agent than " + agent_id);
    }
    if (entries[i].sequence < 1 || (i > 0 && entries[i].sequence != entries[i - 1].sequence + 1)) {
      return InvalidArgumentError("journal entries must have consecutive sequences from 1 up");
    }
  }
  return OkStatus();
}

}  // namespace

std::string FirestoreStore::JournalName(const std::string& agent_id, int64_t sequence) const {
  char id[24];
  std::snprintf(id, sizeof id, "%020lld", static_cast<long long>(sequence));
  return DocumentsPath() + "/checkpoints/" + agent_id + "/journal/" + id;
}

StatusOr<FirestoreStore::JournalHead> FirestoreStore::ReadJournalHead(const std::string& agent_id) {
  ASSIGN_OR_RETURN(AgentState agent, ReadAgent(agent_id));
  JournalHead head;
  head.known = true;
  head.last = std::max(agent.journal_sequence, agent.journal_compacted);
  head.compacted = agent.journal_compacted;
  json query = {{"orderBy", OrderBySequence("DESCENDING")}, {"limit", 2}};
  ASSIGN_OR_RETURN(auto docs, RunQueryIn(agent_id, "journal", std::move(query)));
  for (const json& d : docs) {
    const int64_t seq = SequenceOfName(JsonMemberOr(d, "name", std::string()));
    const json fields = FieldsOf(d);
    if (!IsFence(fields)) {
      head.last = std::max(head.last, seq);
    } else if (seq > head.fence) {
      head.fence = seq;
      head.fence_epoch = JsonMemberOr(fields, "epoch", int64_t{0});
      head.fence_update_time = JsonMemberOr(d, "updateTime", std::string());
    }
  }
  if (head.fence <= head.last) head.fence = 0;  // a spent fence (its slot holds an entry)
  return head;
}

StatusOr<FirestoreStore::JournalHead> FirestoreStore::AddFence(const std::string& agent_id,
                                                               const AgentState& agent,
                                                               const std::string& holder,
                                                               int64_t epoch, json* writes,
                                                               std::vector<int64_t>* fences) {
  json query = {{"orderBy", OrderBySequence("DESCENDING")}, {"limit", 1}};
  ASSIGN_OR_RETURN(auto docs, RunQueryIn(agent_id, "journal", std::move(query)));
  JournalHead head;
  head.known = true;
  head.compacted = agent.journal_compacted;
  head.fence_epoch = epoch;
  json precondition = {{"exists", false}};
  int64_t top = 0;
  if (!docs.empty()) {
    top = SequenceOfName(JsonMemberOr(docs[0], "name", std::string()));
    if (IsFence(FieldsOf(docs[0])) &&
        top > std::max(agent.journal_sequence, agent.journal_compacted)) {
      // An unused fence of an earlier epoch: the new one takes its place.
      head.fence = top;
      precondition = {{"updateTime", JsonMemberOr(docs[0], "updateTime", std::string())}};
    }
  }
  if (head.fence == 0) {
    head.fence = std::max({top, agent.journal_sequence, agent.journal_compacted}) + 1;
  }
  head.last = head.fence - 1;
  writes->push_back({{"update",
                      {{"name", JournalName(agent_id, head.fence)},
                       {"fields",
                        {{"sequence", Integer(head.fence)},
                         {"epoch", Integer(epoch)},
                         {"fence", {{"booleanValue", true}}},
                         {"holder", {{"stringValue", holder}}}}}}},
                     {"currentDocument", precondition}});
  *fences = agent.journal_fences;
  if (fences->empty() || fences->back() != head.fence) fences->push_back(head.fence);
  while (fences->size() > kKeptFences) {
    // A fence dropped from the list is a document compaction spared: delete it now.
    if (fences->front() <= agent.journal_compacted) {
      writes->push_back({{"delete", JournalName(agent_id, fences->front())}});
    }
    fences->erase(fences->begin());
  }
  return head;
}

int64_t FirestoreStore::AddCompaction(const std::string& agent_id, const AgentState& agent,
                                      int64_t through, size_t room, json* writes,
                                      std::vector<std::string>* overflow, int64_t* deleted) {
  int64_t from = agent.journal_compacted;
  {
    std::lock_guard<std::mutex> lock(journal_mu_);
    auto it = journal_cache_.find(agent_id);
    if (it != journal_cache_.end()) from = std::max(from, it->second.compacted);
  }
  const std::set<int64_t> spared(agent.journal_fences.begin(), agent.journal_fences.end());
  int64_t mark = std::max(agent.journal_compacted, std::min(from, through));
  for (int64_t seq = from + 1; seq <= through; ++seq) {
    if (spared.count(seq)) continue;
    ++*deleted;
    if (writes->size() < room) {
      writes->push_back({{"delete", JournalName(agent_id, seq)}});
      mark = seq;
    } else {
      overflow->push_back(JournalName(agent_id, seq));
    }
  }
  return overflow->empty() ? std::max(mark, through) : mark;
}

Status FirestoreStore::AppendJournal(const std::string& agent_id,
                                     const std::vector<JournalEntry>& entries,
                                     const std::optional<LeaseToken>& lease) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  if (entries.empty()) return OkStatus();
  RETURN_IF_ERROR(CheckBatch(agent_id, entries));
  std::lock_guard<std::mutex> lock(journal_mu_);
  JournalHead& head = journal_cache_[agent_id];
  if (!head.known) {
    StatusOr<JournalHead> read = ReadJournalHead(agent_id);
    if (!read.ok()) return read.status();
    head = std::move(read).value();
  }
  const JournalEntry& first = entries.front();
  // A writer that cannot have the sequence is told first whether it still holds the lease.
  auto lease_lost = [&]() -> Status {
    if (!lease.has_value()) return OkStatus();
    ASSIGN_OR_RETURN(AgentState now, ReadAgent(agent_id));
    if (now.lease_holder != lease->holder || now.lease_epoch != lease->epoch) {
      return FailedPreconditionError(LeaseLostMessage(*lease, now.lease_holder, now.lease_epoch));
    }
    return OkStatus();
  };
  if (first.sequence <= head.last) {
    RETURN_IF_ERROR(lease_lost());
    return AlreadyExistsError("journal sequence " + std::to_string(first.sequence) + " of agent " +
                              agent_id + " is not above the last appended " +
                              std::to_string(head.last) + ": another writer got there");
  }
  json writes = json::array();
  for (const JournalEntry& e : entries) {
    const std::string stored = EncodeJournalEntry(e);
    json precondition = {{"exists", false}};
    if (&e == &first && head.fence == e.sequence && lease.has_value() &&
        head.fence_epoch == lease->epoch && !head.fence_update_time.empty()) {
      precondition = {{"updateTime", head.fence_update_time}};  // our own fence
    }
    writes.push_back({{"update",
                       {{"name", JournalName(agent_id, e.sequence)},
                        {"fields",
                         {{"sequence", Integer(e.sequence)},
                          {"epoch", Integer(e.epoch)},
                          {"sizeBytes", Integer(JournalEntryBytes(e))},
                          {"entry", {{"stringValue", stored}}}}}}},
                      {"currentDocument", precondition}});
  }
  CallInfo info;
  StatusOr<json> reply = Commit(writes, &info);
  if (reply.ok()) {
    head.last = entries.back().sequence;
    if (head.fence <= head.last) head.fence = 0;
    return OkStatus();
  }
  // Not a conflict: nothing is known to have changed (an attempt that did apply is found by
  // the conflict its retry meets, below).
  if (!IsConflict(reply.status())) return reply.status();
  head.known = false;
  ASSIGN_OR_RETURN(auto doc, GetDocument(JournalName(agent_id, first.sequence)));
  if (doc.has_value()) {
    StatusOr<JournalEntry> stored =
        DecodeJournalEntry(JsonMemberOr(FieldsOf(*doc), "entry", std::string()));
    if (stored.ok() && stored->sha256 == first.sha256) return OkStatus();  // ours, applied
  }
  RETURN_IF_ERROR(lease_lost());
  return AlreadyExistsError("journal sequence " + std::to_string(first.sequence) + " of agent " +
                            agent_id + " is taken: another writer got there (" +
                            reply.status().message() + ")");
}

StatusOr<std::vector<JournalEntry>> FirestoreStore::ReadJournal(const std::string& agent_id,
                                                                int64_t after_sequence) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  json query = {{"where",
                 {{"fieldFilter",
                   {{"field", {{"fieldPath", "sequence"}}},
                    {"op", "GREATER_THAN"},
                    {"value", Integer(after_sequence)}}}}},
                {"orderBy", OrderBySequence("ASCENDING")}};
  ASSIGN_OR_RETURN(auto docs, RunQueryIn(agent_id, "journal", std::move(query)));
  std::vector<JournalEntry> out;
  for (const json& d : docs) {
    const int64_t seq = SequenceOfName(JsonMemberOr(d, "name", std::string()));
    const json fields = FieldsOf(d);
    if (IsFence(fields)) continue;
    StatusOr<JournalEntry> e = DecodeJournalEntry(JsonMemberOr(fields, "entry", std::string()));
    if (e.ok() && e->sequence == seq) {
      out.push_back(std::move(e).value());
    } else {
      JournalEntry damaged;  // the fold stops here
      damaged.agent_id = agent_id;
      damaged.sequence = seq;
      out.push_back(std::move(damaged));
    }
  }
  return out;
}

StatusOr<JournalStats> FirestoreStore::GetJournalStats(const std::string& agent_id) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  ASSIGN_OR_RETURN(AgentState agent, ReadAgent(agent_id));
  json query = {
      {"select",
       {{"fields", json::array({{{"fieldPath", "sizeBytes"}}, {{"fieldPath", "fence"}}})}}},
      {"orderBy", OrderBySequence("ASCENDING")}};
  ASSIGN_OR_RETURN(auto docs, RunQueryIn(agent_id, "journal", std::move(query)));
  JournalStats s;
  s.last_sequence = std::max(agent.journal_sequence, agent.journal_compacted);
  for (const json& d : docs) {
    const int64_t seq = SequenceOfName(JsonMemberOr(d, "name", std::string()));
    const json fields = FieldsOf(d);
    if (IsFence(fields) || seq <= agent.journal_compacted) continue;
    ++s.entries;
    s.bytes += JsonMemberOr(fields, "sizeBytes", int64_t{0});
    if (s.first_sequence == 0) s.first_sequence = seq;
    s.last_sequence = std::max(s.last_sequence, seq);
  }
  std::lock_guard<std::mutex> lock(journal_mu_);
  auto it = journal_cache_.find(agent_id);
  if (it != journal_cache_.end() && it->second.known) {
    s.last_sequence = std::max(s.last_sequence, it->second.last);
  }
  return s;
}

}  // namespace agentckpt
