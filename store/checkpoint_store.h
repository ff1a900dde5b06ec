// CheckpointStore: where sealed checkpoints live. Implementations: SqliteStore (embedded, the
// default) and FirestoreStore (Cloud Firestore REST v1). One parameterised test suite
// (tests/store/) holds every implementation to this contract.
//
// Thread-safety: every method may be called from any thread; implementations serialise
// internally. Errors (see common/status.h):
//   kAlreadyExists   Put at an (agentId, sequenceNumber) or checkpointId that exists: another
//                    writer got there first. Never retried, never overwritten.
//   kNotFound        no such checkpoint / no checkpoint at all for the agent.
//   kDataLoss        a stored checkpoint is corrupted (only from Get*, never from LatestVerified,
//                    which skips and reports).
//   kUnavailable     the store cannot be reached or is busy: retry.
//   kInvalidArgument bad arguments (e.g. a bad agent id, keep < 1).
//   kFailedPrecondition the agent's writer lease is not the caller's: AcquireLease while another
//                    holder's lease is live ("lease held by H (epoch N) until T"), or RenewLease /
//                    a Put carrying a lease whose epoch was taken over ("lease lost: epoch 3
//                    taken over by holder X at epoch 4"). Never retried: the writer must stop.
//
// Writer lease: one writer per agent. The agent record holds the lease (holder, epoch, expiry).
// AcquireLease takes it when it is free, expired or already the caller's, raising the epoch on
// every change of holder; the holder renews it before it expires and releases it on shutdown.
// A Put whose PutOptions carry a lease checks, in the same transaction/commit as the insert,
// that the lease's holder and epoch are still the agent's current ones. Expiry is judged only
// by AcquireLease (with the caller's clock), so a holder whose lease ran out but was not taken
// over keeps writing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/canonical.h"
#include "checkpoint/checkpoint.h"
#include "common/status.h"
#include "journal/journal_entry.h"

namespace agentckpt {

// One row of a listing: what identifies a checkpoint without opening it.
struct CheckpointInfo {
  std::string checkpoint_id;
  std::string agent_id;
  int64_t sequence_number = 0;
  int64_t timestamp_ms = 0;
  TriggerReason trigger_reason = TriggerReason::kPeriodic;
  int64_t size_bytes = 0;
  int64_t expire_at_ms = 0;
  std::string content_sha256;
};

// A checkpoint that LatestVerified passed over, and why.
struct SkippedCheckpoint {
  std::string checkpoint_id;  // may be empty if the row was too damaged to tell
  int64_t sequence_number = 0;
  std::string reason;  // e.g. "DATA_LOSS: contentSha256 mismatch ..."
};

struct LatestVerified {
  Checkpoint checkpoint;                   // the newest checkpoint that verifies
  std::vector<SkippedCheckpoint> skipped;  // newer ones that did not, newest first
};

// Identifies a writer lease: who holds it and at which epoch.
struct LeaseToken {
  std::string holder;  // e.g. "pod-7/3f9a1c2b": host or pod name plus a random suffix
  int64_t epoch = 0;   // raised by one on every change of holder
};

// A granted lease.
struct Lease {
  std::string holder;
  int64_t epoch = 0;
  int64_t expires_at_ms = 0;  // Unix ms
  // Set by AcquireOrTakeOverLease when the lease was taken from a live holder known to be gone.
  std::string taken_over_from = {};
};

// Says whether a lease holder is known to be gone (its process no longer runs), so its lease may
// be taken before it expires. Called inside a store's lease change: it must be quick and must not
// call the store.
using HolderIsDead = std::function<bool(const std::string& holder)>;

// A lease change a store is asked to make (internal to the store implementations).
struct LeaseChange {
  bool write = false;  // false: leave the record as it is
  Lease lease;
};

struct PutOptions {
  PutOptions() = default;
  explicit PutOptions(int keep_newest) : keep(keep_newest) {}

  int keep = 48;  // retention: after the put, keep only the newest `keep` checkpoints of the agent
  // When set, the put succeeds only if this is still the agent's current lease (checked
  // atomically with the insert); kFailedPrecondition "lease lost: ..." otherwise.
  std::optional<LeaseToken> lease;
  // Journal compaction (docs/journal.md): when above 0, the agent's journal entries at or below
  // this sequence are deleted in the same transaction/commit as the insert.
  int64_t journal_compact_through = 0;
};

struct PutResult {
  int pruned = 0;  // checkpoints deleted by retention in the same transaction/commit
  int64_t journal_compacted = 0;  // journal entries deleted with it
};

// The size of an agent's stored journal.
struct JournalStats {
  int64_t entries = 0;
  int64_t bytes = 0;           // sum of the stored entries' sizes
  int64_t first_sequence = 0;  // 0 when empty
  int64_t last_sequence = 0;   // the highest sequence ever appended (kept after compaction)
};

// The per-agent record kept beside the checkpoints (agents/{agentId} in Firestore).
struct AgentRecord {
  std::string agent_id;
  std::string status;  // "active", "recovering", "stopped", ...
  int64_t updated_at_ms = 0;
  int64_t last_sequence = 0;  // highest sequence number ever written (never goes down)
  std::string lease_holder;   // "" when no one holds the writer lease (or it was released)
  int64_t lease_epoch = 0;    // 0 when no lease was ever taken
  int64_t lease_expires_at_ms = 0;
};

class CheckpointStore {
 public:
  virtual ~CheckpointStore() = default;

  // Stores `cp` if nothing exists at (agentId, sequenceNumber) and no checkpoint has its id, then
  // prunes the agent's checkpoints to the newest `opts.keep`, atomically: either the checkpoint
  // and the pruning are durable when this returns OK, or nothing changed. Also raises the
  // agent's last_sequence. kAlreadyExists on a conflict.
  virtual StatusOr<PutResult> Put(const SealedCheckpoint& cp, const PutOptions& opts) = 0;

  // The newest checkpoint of `agent_id` (by sequenceNumber) whose hash verifies and which
  // decodes; corrupted newer ones are skipped and reported. kNotFound if the agent has no
  // checkpoint that verifies (the skipped list is then lost; use List to inspect).
  virtual StatusOr<LatestVerified> GetLatestVerified(const std::string& agent_id) = 0;

  // A checkpoint by id or by sequence number, verified. kNotFound, kDataLoss.
  virtual StatusOr<Checkpoint> GetById(const std::string& agent_id,
                                       const std::string& checkpoint_id) = 0;
  virtual StatusOr<Checkpoint> GetBySequence(const std::string& agent_id, int64_t sequence) = 0;

  // Up to `limit` checkpoints of the agent, newest first, without verifying them.
  virtual StatusOr<std::vector<CheckpointInfo>> List(const std::string& agent_id, int limit) = 0;

  // Deletes all but the newest `keep` checkpoints of the agent; returns how many were deleted.
  virtual StatusOr<int> Prune(const std::string& agent_id, int keep) = 0;

  // Deletes every checkpoint (of any agent) whose expireAt is at or before `now_ms`; returns how
  // many checkpoints were deleted. The sidecar calls it on a schedule (RetentionSweeper,
  // CKPT_TTL_SWEEP_S) and nothing else enforces CKPT_TTL_DAYS in the embedded store, so a
  // backend that keeps other per-agent data that ages with the checkpoints (e.g. journal
  // entries) must delete the expired part of it in this same call.
  virtual StatusOr<int> DeleteExpired(int64_t now_ms) = 0;

  // The agent's record; a default record (status "", last_sequence 0) if it has none.
  virtual StatusOr<AgentRecord> GetAgent(const std::string& agent_id) = 0;
  // The ids of every agent that has a record in the store (it wrote a checkpoint, a status or
  // took a lease), in ascending order: what a fleet view lists. kUnavailable. Stores that cannot
  // list (the default) return kFailedPrecondition "this store cannot list agents"; decorators
  // must forward.
  virtual StatusOr<std::vector<std::string>> ListAgents();
  // Sets the agent's status (e.g. "recovering", "active"); keeps last_sequence.
  virtual Status SetAgentStatus(const std::string& agent_id, const std::string& status,
                                int64_t now_ms) = 0;

  // Cheap reachability check for readiness probes.
  virtual Status Ping() = 0;

  // Takes the agent's writer lease for `holder` until now_ms + ttl_ms if it is free (never
  // taken or released), expired at `now_ms`, or already held by `holder` (then the epoch is
  // kept and the expiry extended). A new holder gets epoch = previous epoch + 1.
  // kFailedPrecondition "lease held by H (epoch N) until T" while another holder's lease is
  // live; kUnavailable when the store cannot be reached. Stores that do not implement leases
  // (the default) return kFailedPrecondition saying so; decorators must forward.
  virtual StatusOr<Lease> AcquireLease(const std::string& agent_id, const std::string& holder,
                                       int64_t ttl_ms, int64_t now_ms);
  // As AcquireLease, and also takes a live lease of another holder that `is_dead` says is gone,
  // with epoch + 1, in the same single change (so a sidecar restarted after a crash does not
  // wait out its dead predecessor's lease); the granted Lease's taken_over_from names that
  // holder. Errors as AcquireLease. The default (stores without leases) calls AcquireLease.
  virtual StatusOr<Lease> AcquireOrTakeOverLease(const std::string& agent_id,
                                                 const std::string& holder, int64_t ttl_ms,
                                                 int64_t now_ms, const HolderIsDead& is_dead);
  // Extends the lease (holder, epoch) to now_ms + ttl_ms. kFailedPrecondition "lease lost: ..."
  // when the agent's current lease is another holder's or another epoch (even if the caller's
  // lease has expired, renewing succeeds as long as no one took it over).
  virtual StatusOr<Lease> RenewLease(const std::string& agent_id, const LeaseToken& lease,
                                     int64_t ttl_ms, int64_t now_ms);
  // Gives the lease up so another holder can take it at once (the epoch is kept, the holder
  // cleared). OK and no change when (holder, epoch) is no longer the current lease.
  virtual Status ReleaseLease(const std::string& agent_id, const LeaseToken& lease, int64_t now_ms);

  // Journal (docs/journal.md). True when this store keeps a journal; the other journal methods
  // of a store that does not answer
  // kFailedPrecondition "this store keeps no journal". Decorators must forward all of them.
  virtual bool SupportsJournal() const { return false; }
  // Appends `entries` (one agent, consecutive ascending sequences, each above every sequence
  // ever appended for the agent) atomically and durably: when OK is returned they survive a
  // process crash or power loss; otherwise none was stored. With `lease`, the agent's current
  // lease is checked in the same transaction/commit (kFailedPrecondition "lease lost: ...").
  // kAlreadyExists when a sequence is not above the agent's journal high-water mark (another
  // writer got there), kInvalidArgument for entries that are not consecutive or not the agent's,
  // kUnavailable when the store cannot be reached (nothing was stored).
  virtual Status AppendJournal(const std::string& agent_id,
                               const std::vector<JournalEntry>& entries,
                               const std::optional<LeaseToken>& lease);
  // The agent's stored entries with sequence > after_sequence, ascending, as stored (not
  // verified: FoldJournal verifies). An entry that does not decode is returned with what is
  // known (sequence set, sha256 empty) so the fold stops there. kUnavailable.
  virtual StatusOr<std::vector<JournalEntry>> ReadJournal(const std::string& agent_id,
                                                          int64_t after_sequence);
  // The size of the agent's stored journal. kUnavailable.
  virtual StatusOr<JournalStats> GetJournalStats(const std::string& agent_id);
};

// The kFailedPrecondition message for a lease that is no longer (holder, epoch), given the
// agent's current lease (shared by the stores so clients see one wording).
std::string LeaseLostMessage(const LeaseToken& mine, const std::string& current_holder,
                             int64_t current_epoch);
// The kFailedPrecondition message for a lease held by another holder.
std::string LeaseHeldMessage(const std::string& holder, int64_t epoch, int64_t expires_at_ms);

// The lease change of AcquireOrTakeOverLease (shared by the stores), given the stored lease:
// `current` (holder "" when free) and the caller's `holder`, ttl, clock and `is_dead` (may be
// empty). InvalidArgument for an empty holder or a ttl below 1 ms.
StatusOr<LeaseChange> DecideAcquire(const Lease& current, const std::string& holder, int64_t ttl_ms,
                                    int64_t now_ms, const HolderIsDead& is_dead);

// Opens the store named by `url`: "sqlite:///abs/path.db", "sqlite://relative/path.db", or
// "firestore://projects/P/databases/D" (when built in) or "jetstream://..." (NATS settings from
// the environment; store/open_store.h). kInvalidArgument for an unknown scheme.
StatusOr<std::unique_ptr<CheckpointStore>> OpenStore(const std::string& url);

}  // namespace agentckpt
