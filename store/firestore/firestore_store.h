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
// Thread-safety: all methods may be called concurrently; writes are serialised by a mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

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
};

class FirestoreStore final : public LeaseRecordStore {
 public:
  // Opens a store with explicit options (no request is made). kInvalidArgument for a missing
  // project id.
  static StatusOr<std::unique_ptr<FirestoreStore>> Open(FirestoreStoreOptions options);
  // Opens "firestore://projects/P/databases/D". FIRESTORE_EMULATOR_HOST=host:port selects plain
  // HTTP to that host without a token; otherwise https://firestore.googleapis.com with a token
  // from MakeDefaultTokenSource. CKPT_FIRESTORE_HEDGE_MS (0-60000) sets hedge_after_ms.
  // kInvalidArgument for a malformed URL or setting.
  static StatusOr<std::unique_ptr<FirestoreStore>> OpenUrl(const std::string& url);

  // The CheckpointStore contract (checkpoint_store.h), over the Firestore REST API, declared
  // by the file that implements them. firestore_store.cc: a Put is one :commit (snapshot, agent
  // record and pruning together) under the agent record's updateTime; deletes go out in :commit
  // batches.
  StatusOr<PutResult> Put(const SealedCheckpoint& cp, const PutOptions& opts) override;
  Status Ping() override;
  StatusOr<int> Prune(const std::string& agent_id, int keep) override;
  StatusOr<int> DeleteExpired(int64_t now_ms) override;
  StatusOr<AgentRecord> GetAgent(const std::string& agent_id) override;  // agents/{agentId}
  Status SetAgentStatus(const std::string& agent_id, const std::string& status,
                        int64_t now_ms) override;
  // firestore_store_read.cc: runQuery/get calls, hedged when hedge_after_ms is set.
  StatusOr<LatestVerified> GetLatestVerified(const std::string& agent_id) override;
  StatusOr<Checkpoint> GetById(const std::string& agent_id,
                               const std::string& checkpoint_id) override;
  StatusOr<Checkpoint> GetBySequence(const std::string& agent_id, int64_t sequence) override;
  StatusOr<std::vector<CheckpointInfo>> List(const std::string& agent_id, int limit) override;
  // The writer lease: LeaseRecordStore's methods over ChangeLease (below).

  // HTTP requests sent so far, retries included (for benchmarks and tests).
  uint64_t requests_sent() const { return http_->requests_sent(); }
  // "projects/P/databases/D/documents/checkpoints/A/snapshots/ID".
  std::string SnapshotName(const std::string& agent_id, const std::string& checkpoint_id) const;
  std::string AgentName(const std::string& agent_id) const;

 private:
  struct AgentState {
    bool exists = false;
    std::string update_time;
    int64_t last_sequence = 0;
    std::string lease_holder;
    int64_t lease_epoch = 0;
    int64_t lease_expires_at_ms = 0;
  };
  using Listing = std::map<int64_t, std::string>;  // sequenceNumber -> checkpointId

  explicit FirestoreStore(FirestoreStoreOptions options);
  std::string DocumentsPath() const;  // "projects/P/databases/D/documents"
  std::string ApiPath(const std::string& suffix) const { return "/v1/" + suffix; }

  // One :commit; hedged (see the header comment): callers only commit writes that carry a
  // precondition or are deletes.
  StatusOr<nlohmann::json> Commit(const nlohmann::json& writes, CallInfo* info = nullptr);
  // :runQuery under checkpoints/{agent} (or all snapshots when `agent_id` is empty); returns
  // the documents.
  StatusOr<std::vector<nlohmann::json>> RunSnapshotQuery(const std::string& agent_id,
                                                         nlohmann::json structured_query);
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
};

// Converts a snapshot document's fields to its CheckpointInfo (no verification).
StatusOr<CheckpointInfo> CheckpointInfoFromFirestoreDocument(const nlohmann::json& doc);

}  // namespace agentckpt
