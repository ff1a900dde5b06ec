// JetStreamStore: the CheckpointStore on NATS JetStream (docs/jetstream-store.md; format in
// docs/checkpoint-format.md "JetStream store"). Three streams, named from a prefix P (default
// AGENTCKPT), each holding one agent's data under subjects that end in its id, so NATS
// permissions can confine an agent to its own subjects:
//
//   P_AGENTS   P.agents.<agentId>                   the agent record (one message per subject)
//   P_CKPT     P.ckpt.<agentId>.<checkpointId>.<contentSha256>   checkpoint documents
//   P_JOURNAL  P.journal.<agentId>                  the journal: batches of entries and fences
//
// Commit point: the agent record (jetstream_record.h). Every change of an agent publishes a new
// record that expects the previous one's stream sequence (Nats-Expected-Last-Subject-Sequence),
// so the stream serialises an agent's writers: a Put first stores the document on its own
// subject (expecting none there; the subject names the content hash, so two writers of one id
// never overwrite each other's document), then publishes the record that lists it, with the lease
// and sequence checks made against the record it replaces. A writer that loses the compare-and-set
// re-reads the record and gets kAlreadyExists or kFailedPrecondition "lease lost". A document
// the record does not list is not in the store; its writer removes it, and readers never see it.
//
// Journal: one message per AppendJournal call (the entries, one encoded entry per line), which
// expects the subject's last message, so appends are atomic and ordered. Each message carries
// the writer's lease epoch and holder; a lease change that raises the epoch (or a release)
// publishes a fence message after the record, and an append with a lease whose epoch is below
// the last message's (or whose holder differs at the same epoch) is refused with "lease lost".
// Compaction is a mark in the record (journalCompacted: entries at or below are deleted) set in
// the Put's own record; the messages below it are removed afterwards, one by one (the last
// message of the subject is always kept: it holds the high-water mark and the fence).
//
// Removal is always by stream sequence ($JS.API.STREAM.MSG.DELETE), never by a stream purge:
// nats-server 2.9.10 replays a purge from its Raft log on start as "remove every message below
// the purge's last sequence" whatever its subject filter, which removed retained documents.
//
// Durability: an acknowledged publish is on every replica's disk (R3: a quorum of two) before
// the store returns. Reads go to the stream leader. Requests that find no leader (an election
// after a node was lost) are retried until retry_ms (default 20 s), with the same message id,
// so the server's duplicate window (2 minutes) keeps a retried publish from being stored twice.
//
// Thread-safety: every method may be called from any thread. Record changes are serialised by
// a mutex per store handle, journal appends by another one.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "store/backend_rules.h"
#include "store/checkpoint_store.h"
#include "store/jetstream/jetstream_api.h"
#include "store/jetstream/jetstream_record.h"

namespace agentckpt {

struct JetStreamStoreOptions {
  JetStreamApiOptions api;
  std::string prefix = "AGENTCKPT";  // [A-Za-z0-9_-], 1-32 characters
  int replicas = 1;                  // for the streams this store creates
  bool create = false;               // create missing streams (else kNotFound at Open)
};

class JetStreamStore final : public LeaseRecordStore {
 public:
  // jetstream_store_open.cc. Connects and checks (or, with `create`, makes) the three streams.
  // kNotFound when a stream is missing, kFailedPrecondition when one exists with other settings,
  // the connect errors of JetStreamApi::Connect.
  static StatusOr<std::unique_ptr<JetStreamStore>> Open(JetStreamStoreOptions options);
  // Parses "jetstream://[host:port[,host:port...]]/[PREFIX][?replicas=N&create=1&timeout_ms=N
  // &retry_ms=N]". Without hosts, `default_servers` (the sidecar's NATS_URL) is used; `auth` is
  // the NATS authentication to use. kInvalidArgument naming what is wrong.
  static StatusOr<JetStreamStoreOptions> ParseUrl(const std::string& url,
                                                  const std::string& default_servers,
                                                  const NatsAuthOptions& auth);
  // The three stream specifications of `options` (what setup-store provisions).
  static std::vector<JsStreamSpec> StreamSpecs(const JetStreamStoreOptions& options);

  // The CheckpointStore contract (checkpoint_store.h). jetstream_store.cc: the write path.
  StatusOr<PutResult> Put(const SealedCheckpoint& cp, const PutOptions& opts) override;
  StatusOr<int> Prune(const std::string& agent_id, int keep) override;
  // Reads every agent's record (ListAgents) and removes the expired checkpoints from each.
  StatusOr<int> DeleteExpired(int64_t now_ms) override;
  // jetstream_store_lease.cc (with ChangeLease).
  Status SetAgentStatus(const std::string& agent_id, const std::string& status,
                        int64_t now_ms) override;
  // jetstream_store_open.cc.
  Status Ping() override;
  // jetstream_store_read.cc: every read asks the stream leader (never a cached record).
  StatusOr<LatestVerified> GetLatestVerified(const std::string& agent_id) override;
  StatusOr<Checkpoint> GetById(const std::string& agent_id,
                               const std::string& checkpoint_id) override;
  StatusOr<Checkpoint> GetBySequence(const std::string& agent_id, int64_t sequence) override;
  StatusOr<std::vector<CheckpointInfo>> List(const std::string& agent_id, int limit) override;
  StatusOr<AgentRecord> GetAgent(const std::string& agent_id) override;
  StatusOr<std::vector<std::string>> ListAgents() override;
  // jetstream_store_journal.cc.
  bool SupportsJournal() const override { return true; }
  Status AppendJournal(const std::string& agent_id, const std::vector<JournalEntry>& entries,
                       const std::optional<LeaseToken>& lease) override;
  StatusOr<std::vector<JournalEntry>> ReadJournal(const std::string& agent_id,
                                                  int64_t after_sequence) override;
  StatusOr<JournalStats> GetJournalStats(const std::string& agent_id) override;

  // NATS requests sent so far (benchmarks divide by operations).
  uint64_t requests_sent() const { return api_->requests_sent(); }
  // Subject and stream names (docs/jetstream-store.md).
  std::string AgentSubject(const std::string& agent_id) const;
  std::string CheckpointSubject(const std::string& agent_id, const std::string& id,
                                const std::string& sha256) const;
  std::string JournalSubject(const std::string& agent_id) const;
  std::string AgentsStream() const { return prefix_ + "_AGENTS"; }
  std::string CheckpointsStream() const { return prefix_ + "_CKPT"; }
  std::string JournalStream() const { return prefix_ + "_JOURNAL"; }
  JetStreamApi* api() const { return api_.get(); }

 protected:
  StatusOr<LeaseChange> ChangeLease(const std::string& agent_id, int64_t now_ms,
                                    const LeaseDecision& decide) override;

 private:
  // An agent record as read, with the stream sequence of its message (0: no record yet).
  struct Record {
    uint64_t revision = 0;
    JsAgentRecord rec;
  };
  // What this handle knows of an agent's journal subject (from its last message).
  struct JournalHead {
    uint64_t subject_last = 0;  // stream sequence of the subject's last message (0: none)
    int64_t last_entry = 0;     // the highest entry sequence ever appended
    int64_t epoch = 0;          // the lease epoch the last message was written under
    std::string holder;         // and its holder ("" for a release mark or no lease)
  };
  // One journal message as stored.
  struct JournalMessage {
    uint64_t seq = 0;
    std::string kind;  // "entries", "fence", "release"
    int64_t first = 0, last = 0;
    std::string data;
  };
  using RecordChange = std::function<StatusOr<bool>(JsAgentRecord* rec)>;

  JetStreamStore(JetStreamStoreOptions options, std::unique_ptr<JetStreamApi> api);
  StatusOr<Record> ReadRecord(const std::string& agent_id);
  // Reads the record (the cached one when `cached`), applies `change` and publishes the result
  // expecting the record it read, re-reading on a lost compare-and-set (bounded). `change`
  // returning false publishes nothing. Returns the record as stored. Call with mu_ held.
  StatusOr<Record> ChangeRecordLocked(const std::string& agent_id, bool cached,
                                      const RecordChange& change);
  // Removes checkpoint documents the record no longer lists (best effort: logged).
  void RemoveDocuments(const std::string& agent_id, const std::vector<JsCheckpointRef>& refs);
  // Removes the message on a document's subject (its one message), by stream sequence.
  Status RemoveDocument(const std::string& subject);
  StatusOr<Checkpoint> ReadDocument(const std::string& agent_id, const JsCheckpointRef& ref);
  StatusOr<JournalHead> ReadJournalHead(const std::string& agent_id);
  StatusOr<std::vector<JournalMessage>> ReadJournalMessages(const std::string& agent_id);
  // After a lease change to (holder, epoch): publishes a fence (or, for a release, a release
  // mark) unless the journal's last message already carries them.
  Status FenceJournal(const std::string& agent_id, const std::string& holder, int64_t epoch,
                      bool release);
  // Counts the entries in (from, through] and removes, one by one and outside journal_mu_, the
  // messages (entries and marks) below the first one still needed (never the subject's last).
  StatusOr<int64_t> CompactJournal(const std::string& agent_id, int64_t from, int64_t through);
  std::string NewMessageId();

  const std::string prefix_;
  std::unique_ptr<JetStreamApi> api_;
  std::mutex mu_;                          // record changes
  std::map<std::string, Record> records_;  // guarded by mu_: the last record this handle wrote
  std::mutex journal_mu_;
  std::map<std::string, JournalHead> heads_;  // guarded by journal_mu_
  // The journal's messages, by stream sequence, as this handle knows them (guarded by
  // journal_mu_). Present only while complete: set by a scan of the subject, kept up by this
  // handle's appends and fences, dropped when another writer may have written. It spares a
  // compaction the scan.
  struct Span {
    uint64_t seq = 0;
    int64_t first = 0, last = 0;  // the entries it holds; 0, 0 for a fence or release mark
  };
  std::map<std::string, std::vector<Span>> spans_;
};

}  // namespace agentckpt
