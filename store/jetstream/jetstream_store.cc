// JetStreamStore: names, the agent record's compare-and-set and the write path (Put, Prune,
// DeleteExpired). Opening is in jetstream_store_open.cc, status and lease changes in
// jetstream_store_lease.cc.
#include "store/jetstream/jetstream_store.h"

#include <algorithm>
#include <atomic>

#include "checkpoint/canonical.h"
#include "common/ids.h"
#include "common/status_macros.h"
#include "observability/json_log.h"

namespace agentckpt {
namespace {

constexpr int kMaxCompareAndSetRounds = 16;

// Sorts newest first and removes (into *pruned) every ref beyond the newest `keep`.
void KeepNewest(std::vector<JsCheckpointRef>* refs, size_t keep,
                std::vector<JsCheckpointRef>* pruned) {
  std::sort(refs->begin(), refs->end(), [](const JsCheckpointRef& a, const JsCheckpointRef& b) {
    return a.sequence > b.sequence;
  });
  while (refs->size() > keep) {
    pruned->push_back(std::move(refs->back()));
    refs->pop_back();
  }
}

}  // namespace

std::string JetStreamStore::AgentSubject(const std::string& agent_id) const {
  return prefix_ + ".agents." + agent_id;
}
std::string JetStreamStore::CheckpointSubject(const std::string& agent_id, const std::string& id,
                                              const std::string& sha256) const {
  return prefix_ + ".ckpt." + agent_id + "." + id + "." + sha256;
}
std::string JetStreamStore::JournalSubject(const std::string& agent_id) const {
  return prefix_ + ".journal." + agent_id;
}

std::string JetStreamStore::NewMessageId() {
  uint8_t bytes[16];
  if (!api_->env()->RandomBytes(bytes, sizeof(bytes)).ok()) {
    // Without randomness the id is still unique within this process's life.
    static std::atomic<uint64_t> n{0};
    return "agentckpt-" + std::to_string(api_->env()->NowMonotonicMicros()) + "-" +
           std::to_string(n.fetch_add(1));
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

StatusOr<JetStreamStore::Record> JetStreamStore::ReadRecord(const std::string& agent_id) {
  ASSIGN_OR_RETURN(std::optional<JsMessage> msg,
                   api_->GetLast(AgentsStream(), AgentSubject(agent_id)));
  Record out;
  out.rec.agent_id = agent_id;
  if (!msg) return out;
  ASSIGN_OR_RETURN(out.rec, DecodeAgentRecord(msg->data));
  if (out.rec.agent_id != agent_id) {
    return DataLossError("agent record of " + agent_id + " names agent " + out.rec.agent_id);
  }
  out.revision = msg->seq;
  return out;
}

StatusOr<JetStreamStore::Record> JetStreamStore::ChangeRecordLocked(const std::string& agent_id,
                                                                    bool cached,
                                                                    const RecordChange& change) {
  Record current;
  auto hit = records_.find(agent_id);
  if (cached && hit != records_.end()) {
    current = hit->second;
  } else {
    ASSIGN_OR_RETURN(current, ReadRecord(agent_id));
  }
  for (int round = 0; round < kMaxCompareAndSetRounds; ++round) {
    JsAgentRecord next = current.rec;
    ASSIGN_OR_RETURN(bool write, change(&next));
    if (!write) return current;
    const std::string id = NewMessageId();
    StatusOr<uint64_t> seq =
        api_->Publish(AgentSubject(agent_id), EncodeAgentRecord(next), {}, id, current.revision);
    if (seq.ok()) {
      Record stored{*seq, std::move(next)};
      records_[agent_id] = stored;
      return stored;
    }
    records_.erase(agent_id);
    if (seq.status().code() != StatusCode::kAlreadyExists) {
      // The outcome is unknown (the retries ran out): the record tells.
      StatusOr<Record> now = ReadRecord(agent_id);
      if (now.ok() && now->rec == next) {
        records_[agent_id] = *now;
        return now;
      }
      return seq.status();
    }
    // Another writer changed the record since it was read, or this very publish was stored
    // before a leader change and its retry was refused (the new leader did not recognise the
    // message id): read it again; if it is ours, done, else decide again.
    ASSIGN_OR_RETURN(current, ReadRecord(agent_id));
    if (current.rec == next) {
      records_[agent_id] = current;
      return current;
    }
  }
  return UnavailableError("agent record of " + agent_id + " keeps changing under this writer (" +
                          std::to_string(kMaxCompareAndSetRounds) + " rounds)");
}

Status JetStreamStore::RemoveDocument(const std::string& subject) {
  ASSIGN_OR_RETURN(std::optional<JsMessage> doc, api_->GetLast(CheckpointsStream(), subject));
  if (!doc.has_value()) return OkStatus();
  return api_->DeleteMessage(CheckpointsStream(), doc->seq);
}

void JetStreamStore::RemoveDocuments(const std::string& agent_id,
                                     const std::vector<JsCheckpointRef>& refs) {
  for (const JsCheckpointRef& ref : refs) {
    Status removed =
        RemoveDocument(CheckpointSubject(agent_id, ref.checkpoint_id, ref.content_sha256));
    if (!removed.ok()) {
      // The record no longer lists it, so it is unreachable; it only takes space.
      LogWarn("jetstream store: a pruned checkpoint document was not removed",
              {{"agentId", agent_id},
               {"checkpointId", ref.checkpoint_id},
               {"error", removed.ToString()}});
    }
  }
}

StatusOr<PutResult> JetStreamStore::Put(const SealedCheckpoint& sealed, const PutOptions& opts) {
  RETURN_IF_ERROR(CheckPutArguments(sealed, opts));
  const Checkpoint& cp = sealed.doc;
  const std::string& agent = cp.agent_id;
  JsCheckpointRef ref{cp.sequence_number, cp.checkpoint_id, cp.timestamp_ms,  cp.trigger_reason,
                      cp.size_bytes,      cp.expire_at_ms,  cp.content_sha256};
  // The checks the record decides, made again on every compare-and-set round.
  auto conflicts = [&](const JsAgentRecord& rec) -> Status {
    if (opts.lease &&
        (rec.lease_holder != opts.lease->holder || rec.lease_epoch != opts.lease->epoch)) {
      return FailedPreconditionError(
          LeaseLostMessage(*opts.lease, rec.lease_holder, rec.lease_epoch));
    }
    if (cp.sequence_number <= rec.last_sequence) {
      return AlreadyExistsError("checkpoint sequence " + std::to_string(cp.sequence_number) +
                                " of agent " + agent + " is not above the last written " +
                                std::to_string(rec.last_sequence) + ": another writer got there");
    }
    for (const JsCheckpointRef& r : rec.checkpoints) {
      if (r.checkpoint_id == cp.checkpoint_id) {
        return AlreadyExistsError("checkpoint " + cp.checkpoint_id + " is stored already");
      }
    }
    return OkStatus();
  };
  std::lock_guard<std::mutex> lock(mu_);
  // Refuse what the record already refuses before a document is written (the final word is the
  // compare-and-set below). A refusal by the cached record is checked against a fresh read.
  if (auto hit = records_.find(agent); hit == records_.end() || !conflicts(hit->second.rec).ok()) {
    ASSIGN_OR_RETURN(Record fresh, ReadRecord(agent));
    RETURN_IF_ERROR(conflicts(fresh.rec));
    records_[agent] = std::move(fresh);
  }
  // 1. The document, on a subject named by its id and content hash, only where nothing is. A
  // message already there holds the same document (an earlier attempt of this put, whose
  // writer died before its record) unless it was damaged: then it is replaced, under its own
  // sequence.
  const std::string subject = CheckpointSubject(agent, cp.checkpoint_id, cp.content_sha256);
  const std::string document = FullDocumentJson(sealed);
  StatusOr<uint64_t> doc = api_->Publish(subject, document, {}, NewMessageId(), 0);
  if (!doc.ok()) {
    if (doc.status().code() != StatusCode::kAlreadyExists) return doc.status();
    ASSIGN_OR_RETURN(std::optional<JsMessage> there, api_->GetLast(CheckpointsStream(), subject));
    if (!there || there->data != document) {
      RETURN_IF_ERROR(
          api_->Publish(subject, document, {}, NewMessageId(), there ? there->seq : 0).status());
    }
  }
  // 2. The record that lists it: the commit.
  PutResult result;
  std::vector<JsCheckpointRef> pruned;
  int64_t compacted_from = 0, compacted_to = 0;
  StatusOr<Record> committed =
      ChangeRecordLocked(agent, /*cached=*/true, [&](JsAgentRecord* rec) -> StatusOr<bool> {
        RETURN_IF_ERROR(conflicts(*rec));
        pruned.clear();
        rec->agent_id = agent;
        rec->checkpoints.push_back(ref);
        KeepNewest(&rec->checkpoints, static_cast<size_t>(opts.keep), &pruned);
        rec->last_sequence = cp.sequence_number;
        if (rec->updated_at_ms == 0) rec->updated_at_ms = cp.timestamp_ms;
        compacted_from = rec->journal_compacted;
        rec->journal_compacted = std::max(rec->journal_compacted, opts.journal_compact_through);
        compacted_to = rec->journal_compacted;
        return true;
      });
  if (!committed.ok()) {
    // An unknown outcome (the retries ran out during a leader election) may still be applied
    // later by the cluster: then the record lists this document, so it must stay.
    if (committed.status().code() == StatusCode::kUnavailable) return committed.status();
    // Refused. Unless the record lists this very document (a put repeated after it was
    // committed), nothing will ever list it: remove it (best effort; readers never see it).
    StatusOr<Record> now = ReadRecord(agent);
    const bool listed =
        !now.ok() || std::any_of(now->rec.checkpoints.begin(), now->rec.checkpoints.end(),
                                 [&](const JsCheckpointRef& r) {
                                   return r.checkpoint_id == cp.checkpoint_id &&
                                          r.content_sha256 == cp.content_sha256;
                                 });
    if (!listed) (void)RemoveDocument(subject);
    return committed.status();
  }
  result.pruned = static_cast<int>(pruned.size());
  RemoveDocuments(agent, pruned);
  if (compacted_to > compacted_from) {
    StatusOr<int64_t> n = CompactJournal(agent, compacted_from, compacted_to);
    if (n.ok()) {
      result.journal_compacted = *n;
    } else {
      // The record's mark already hides those entries; only their space is not yet reclaimed.
      LogWarn("jetstream store: compacted journal entries were not removed",
              {{"agentId", agent}, {"error", n.status().ToString()}});
    }
  }
  return result;
}

StatusOr<int> JetStreamStore::Prune(const std::string& agent_id, int keep) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  if (keep < 1) return InvalidArgumentError("keep must be at least 1");
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<JsCheckpointRef> pruned;
  ASSIGN_OR_RETURN(Record r, ChangeRecordLocked(agent_id, false, [&](JsAgentRecord* rec) {
                     pruned.clear();
                     KeepNewest(&rec->checkpoints, static_cast<size_t>(keep), &pruned);
                     return StatusOr<bool>(!pruned.empty());
                   }));
  (void)r;
  RemoveDocuments(agent_id, pruned);
  return static_cast<int>(pruned.size());
}

StatusOr<int> JetStreamStore::DeleteExpired(int64_t now_ms) {
  ASSIGN_OR_RETURN(std::vector<std::string> agents, ListAgents());
  int deleted = 0;
  for (const std::string& agent : agents) {
    std::vector<JsCheckpointRef> expired;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ASSIGN_OR_RETURN(Record r, ChangeRecordLocked(agent, false, [&](JsAgentRecord* rec) {
                         expired.clear();
                         auto& list = rec->checkpoints;
                         for (auto it = list.begin(); it != list.end();) {
                           if (it->expire_at_ms <= now_ms) {
                             expired.push_back(*it);
                             it = list.erase(it);
                           } else {
                             ++it;
                           }
                         }
                         return StatusOr<bool>(!expired.empty());
                       }));
      (void)r;
    }
    RemoveDocuments(agent, expired);
    deleted += static_cast<int>(expired.size());
  }
  return deleted;
}

}  // namespace agentckpt
