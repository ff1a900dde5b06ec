// FirestoreStore: the CheckpointStore on Cloud Firestore's REST v1 API (docs/firestore.md).
//
// Layout: checkpoints/{agentId}/snapshots/{checkpointId} holds the checkpoint's fields as typed
// values plus contentSha256; agents/{agentId} holds agentId, status, updatedAt, lastSequence.
//
// agents/{agentId} also holds the writer lease: leaseHolder, leaseEpoch, leaseExpiresAtMs.
// Put is one :commit holding (1) the snapshot with the precondition exists=false, (2) the agent
// record with lastSequence = the new sequence under an updateTime precondition (exists=false
// for a new agent), and (3) deletes of the snapshots beyond `keep`. The agent record's
// updateTime serialises every writer of an agent: a second writer's commit fails its
// precondition, re-reads the record and gets kAlreadyExists when its sequence is not above
// lastSequence, so an (agentId, sequenceNumber) is never written twice. The agent record and
// the listing used for retention are cached from the previous commit, so a steady-state Put is
// exactly one HTTP request. A Put carrying a lease checks the cached record's lease and relies
// on the same updateTime precondition: a takeover rewrites the record, so a stale holder's
// commit fails, re-reads and gets kFailedPrecondition "lease lost" (still one request per Put
// in the steady state; this sidecar's own renewals refresh the cached updateTime).
// GetLatestVerified is one :runQuery (ordered by sequenceNumber descending, limit 2) when the
// newest checkpoint verifies.
//
// A retried commit whose earlier attempt may have been applied (timeout, dropped connection)
// is resolved by reading the snapshot back: if it holds our contentSha256 the Put succeeded.
// SetAgentStatus also commits under the record's updateTime precondition (re-reading on a
// conflict), so it keeps the cached record current.
//
// Hedging: every read, and every commit (each of whose writes carries a precondition or is a
// delete), is sent a second time when the first request has not answered within
// hedge_after_ms (FirestoreHttp); the preconditions make a late duplicate fail harmlessly.
//
// Journal (docs/journal.md, format in docs/checkpoint-format.md): each entry is its own document
// checkpoints/{agentId}/journal/{sequence, 20 digits}, created with the precondition
// exists=false, so an append is one :commit (a group of entries shares it) and no document is
// written twice; the agent record is not touched by appends. Fencing: a lease change that
// raises the epoch also writes a fence document at the first free journal sequence (in the
// same commit as the lease); the new holder's first entry replaces it (under its updateTime),
// and a stale writer's next entry, which needs that very sequence, fails its exists=false
// precondition and gets kFailedPrecondition "lease lost". The agent record lists the last
// kKeptFences fence sequences (journalFences); compaction keeps those documents so a stale
// writer stays fenced after the entries around them are deleted. A checkpoint Put records the
// journal sequence it includes (journalSequence) and deletes the compacted entries in its own
// commit (what does not fit in Firestore's 500 writes goes out in further commits right after).
//
// Thread-safety: all methods may be called concurrently; writes are serialised by a mutex
// (journal appends by a second one, so they do not wait for a checkpoint's commit).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/env.h"
#include "store/backend_rules.h"
#include "store/checkpoint_store.h"
#include "store/firestore/firestore_auth.h"
#include "store/firestore/firestore_http.h"

namespace agentckpt {

struct FirestoreStoreOptions {
  std::string project_id;
  std::string database_id = "(default)";
  // "https://firestore.googleapis.com" or "http://host:port" (emulator: no token is sent).
  std::string endpoint = "https://firestore.googleapis.com";
  std::unique_ptr<TokenSource> tokens;  // null: no Authorization header
  Env* env = nullptr;                   // Env::Default() when null
  int64_t request_timeout_ms = 10'000;
  int64_t overall_deadline_ms = 30'000;
  int64_t initial_backoff_ms = 10;
  int64_t max_backoff_ms = 2'000;
  int64_t hedge_after_ms = 50;  // 0: never hedge (see FirestoreHttpOptions)
  // The proxy variables for requests to `endpoint` (http_proxy.h); empty: always direct.
  ProxyEnvironment proxy_env;
};

class FirestoreStore final : public LeaseRecordStore {
 public:
  // Opens a store with explicit options (no request is made). kInvalidArgument for a missing
  // project id, or a proxy variable in options.proxy_env that names no usable proxy.
  static StatusOr<std::unique_ptr<FirestoreStore>> Open(FirestoreStoreOptions options);
  // Opens "firestore://projects/P/databases/D". FIRESTORE_EMULATOR_HOST=host:port selects plain
  // HTTP to that host without a token; otherwise https://firestore.googleapis.com with a token
  // from MakeDefaultTokenSource. CKPT_FIRESTORE_HEDGE_MS (0-60000) sets hedge_after_ms. The
  // process's proxy variables (http_proxy.h) choose the route. kInvalidArgument for a malformed
  // URL or setting.
  static StatusOr<std::unique_ptr<FirestoreStore>> OpenUrl(const std::string& url);
  // The endpoint OpenUrl uses: http://$FIRESTORE_EMULATOR_HOST when set, else
  // https://firestore.googleapis.com.
  static std::string EndpointFromEnvironment();

  // The CheckpointStore contract (checkpoint_store.h), over the Firestore REST API, declared
  // by the file that implements them. firestore_store.cc: a Put is one :commit (snapshot, agent
  // record and pruning together) under the agent record's updateTime; deletes go out in :commit
  // batches. Ping: firestore_store_open.cc; GetAgent (agents/{agentId}):
  // firestore_store_agent.cc.
  StatusOr<PutResult> Put(const SealedCheckpoint& cp, const PutOptions& opts) override;
  Status Ping() override;
  StatusOr<int> Prune(const std::string& agent_id, int keep) override;
  StatusOr<int> DeleteExpired(int64_t now_ms) override;
  StatusOr<AgentRecord> GetAgent(const std::string& agent_id) override;
  Status SetAgentStatus(const std::string& agent_id, const std::string& status,
                        int64_t now_ms) override;
  // firestore_store_read.cc: runQuery/get calls, hedged when hedge_after_ms is set.
  StatusOr<LatestVerified> GetLatestVerified(const std::string& agent_id) override;
  StatusOr<Checkpoint> GetById(const std::string& agent_id,
                               const std::string& checkpoint_id) override;
  StatusOr<Checkpoint> GetBySequence(const std::string& agent_id, int64_t sequence) override;
  StatusOr<std::vector<CheckpointInfo>> List(const std::string& agent_id, int limit) override;
  // The ids of the agents/{agentId} documents: :runQuery pages of 1,000 names (no fields),
  // each page after the last name of the one before (a __name__ filter).
  StatusOr<std::vector<std::string>> ListAgents() override;
  // The writer lease: LeaseRecordStore's methods over ChangeLease (below).
  // firestore_store_journal.cc: the journal (see the header comment). AppendJournal is one
  // :commit per call when this store knows the agent's journal head (after its lease change,
  // a read or an append); otherwise it reads the head first (two more requests).
  bool SupportsJournal() const override { return true; }
  Status AppendJournal(const std::string& agent_id, const std::vector<JournalEntry>& entries,
                       const std::optional<LeaseToken>& lease) override;
  StatusOr<std::vector<JournalEntry>> ReadJournal(const std::string& agent_id,
                                                  int64_t after_sequence) override;
  // Counts the entries above the compacted sequence (the kept fence documents below it are not
  // counted).
  StatusOr<JournalStats> GetJournalStats(const std::string& agent_id) override;

  // HTTP requests sent so far, retries included (for benchmarks and tests).
  uint64_t requests_sent() const { return http_->requests_sent(); }
  // "projects/P/databases/D/documents/checkpoints/A/snapshots/ID".
  std::string SnapshotName(const std::string& agent_id, const std::string& checkpoint_id) const;
  std::string AgentName(const std::string& agent_id) const;
  // "projects/P/databases/D/documents/checkpoints/A/journal/00000000000000000042".
  std::string JournalName(const std::string& agent_id, int64_t sequence) const;
  // How many fence sequences the agent record keeps (and compaction spares).
  static constexpr size_t kKeptFences = 8;

 private:
  struct AgentState {
    bool exists = false;
    std::string update_time;
    int64_t last_sequence = 0;
    std::string lease_holder;
    int64_t lease_epoch = 0;
    int64_t lease_expires_at_ms = 0;
    int64_t journal_sequence = 0;   // journalSequence: included by the newest checkpoint
    int64_t journal_compacted = 0;  // journalCompactedThrough: entries at or below are deleted
    std::vector<int64_t> journal_fences;  // journalFences, oldest first
  };
  // What this store knows of an agent's journal (guarded by journal_mu_).
  struct JournalHead {
    bool known = false;
    int64_t last = 0;         // the highest sequence taken (entries, or below a fence)
    int64_t fence = 0;        // a fence document's sequence (0: none above `last`)
    int64_t fence_epoch = 0;  // its epoch
    std::string fence_update_time;
    int64_t compacted = 0;  // entries at or below are deleted
  };
  using Listing = std::map<int64_t, std::string>;  // sequenceNumber -> checkpointId

  FirestoreStore(FirestoreStoreOptions options, ProxyRoute route);
  std::string DocumentsPath() const;  // "projects/P/databases/D/documents"
  std::string ApiPath(const std::string& suffix) const { return "/v1/" + suffix; }

  // One :commit; hedged (see the header comment): callers only commit writes that carry a
  // precondition or are deletes.
  StatusOr<nlohmann::json> Commit(const nlohmann::json& writes, CallInfo* info = nullptr);
  // :runQuery under checkpoints/{agent} (or all snapshots when `agent_id` is empty); returns
  // the documents.
  StatusOr<std::vector<nlohmann::json>> RunSnapshotQuery(const std::string& agent_id,
                                                         nlohmann::json structured_query);
  // :runQuery of `collection` under checkpoints/{agent_id} (all agents' when empty).
  StatusOr<std::vector<nlohmann::json>> RunQueryIn(const std::string& agent_id,
                                                   const std::string& collection,
                                                   nlohmann::json structured_query);
  // Reads the agent's journal head: the record's journal fields and the newest documents.
  StatusOr<JournalHead> ReadJournalHead(const std::string& agent_id);
  // The fence write of a lease change to `epoch` (appended to `writes`) and the head it leaves;
  // one :runQuery for the newest journal document (firestore_store_journal.cc).
  StatusOr<JournalHead> AddFence(const std::string& agent_id, const AgentState& agent,
                                 const std::string& holder, int64_t epoch, nlohmann::json* writes,
                                 std::vector<int64_t>* fences);
  // The journal deletes of a Put compacting through `through` (up to `room` of them go in
  // `writes`, the rest in `overflow`); returns the compaction mark the commit records.
  int64_t AddCompaction(const std::string& agent_id, const AgentState& agent, int64_t through,
                        size_t room, nlohmann::json* writes, std::vector<std::string>* overflow,
                        int64_t* deleted);
  // GET of one document; nullopt if it does not exist.
  StatusOr<std::optional<nlohmann::json>> GetDocument(const std::string& name);
  StatusOr<AgentState> ReadAgent(const std::string& agent_id);
  // The currentDocument precondition of a write of the agent record as `agent` saw it: its
  // updateTime, or exists=false when it had none.
  static nlohmann::json AgentPrecondition(const AgentState& agent);
  // The updateTime of write `index` in a :commit reply; empty when the reply has none.
  static std::string WrittenUpdateTime(const nlohmann::json& reply, size_t index);
  StatusOr<Listing> ReadListing(const std::string& agent_id);
  // Decodes and verifies a snapshot document and checks it sits at its own path.
  StatusOr<Checkpoint> DecodeSnapshot(const nlohmann::json& doc, const std::string& agent_id);
  StatusOr<PutResult> PutLocked(const SealedCheckpoint& sealed, const nlohmann::json& fields,
                                const PutOptions& opts);
  // One lease change: reads the agent record (cached when possible), asks `decide`, and
  // commits the new lease under the record's updateTime precondition, re-reading on conflict
  // (firestore_store_lease.cc). Returns what `decide` returned. The lease methods
  // (LeaseRecordStore, store/backend_rules.h) run on it.
  StatusOr<LeaseChange> ChangeLease(const std::string& agent_id, int64_t now_ms,
                                    const LeaseDecision& decide) override;
  StatusOr<int> DeleteDocuments(const std::vector<std::string>& names);

  FirestoreStoreOptions options_;
  std::unique_ptr<FirestoreHttp> http_;
  std::mutex write_mu_;  // serialises writes and guards the caches below
  std::map<std::string, AgentState> agent_cache_;
  std::map<std::string, Listing> listing_cache_;
  std::mutex journal_mu_;  // serialises appends; guards journal_cache_ (taken after write_mu_)
  std::map<std::string, JournalHead> journal_cache_;
};

// Converts a snapshot document's fields to its CheckpointInfo (no verification).
StatusOr<CheckpointInfo> CheckpointInfoFromFirestoreDocument(const nlohmann::json& doc);

}  // namespace agentckpt
