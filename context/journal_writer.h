// JournalWriter: makes each accepted context mutation durable in the store's journal before
// the reply (docs/journal.md).
//
// ContextState calls Record under its lock for every accepted request, so entries get their
// sequence in the order the changes were applied; the HTTP handler then calls Await outside
// that lock. In sync mode (the default) Await returns once the entry is in the store: the first
// waiter with nothing being written becomes the committer and appends every pending entry in one
// store transaction (group commit: concurrent updates share one commit, nobody waits for a
// timer). In async mode a flusher thread appends pending entries at once and Await returns
// without waiting (durable=false); in memory mode nothing is appended.
//
// Until Activate (standby) and after Fence (lease lost) or a failed append (journal broken),
// Record refuses changes, so no change is ever accepted that cannot be made durable. When the
// tail after the newest checkpoint reaches 7/8 of max_entries or max_bytes, the committer asks
// for a checkpoint without waiting for it (the `request_checkpoint` callback: the sidecar writes
// it on another thread, so no request waits for it); if the tail still reaches max_entries or
// max_bytes, the committer writes one (the `force_checkpoint` callback) before it lets the next
// group commit, so the bound holds whatever the other thread does.
// All methods are thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/env.h"
#include "common/status.h"
#include "journal/journal_entry.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

enum class Durability { kSync, kAsync, kMemory };
std::string_view DurabilityName(Durability d);  // "sync", "async", "memory"
std::optional<Durability> ParseDurability(std::string_view name);

struct JournalOptions {
  std::string agent_id;
  Durability durability = Durability::kSync;
  int64_t async_flush_ms = 20;
  int64_t max_entries = 1000;
  int64_t max_bytes = int64_t{4} << 20;
};

// What the reply to a mutation says.
struct JournalAck {
  int64_t sequence = 0;  // the journal sequence the context is at after the request
  bool durable = false;  // true: the change (and every one before it) is in the store
};

// How far the journal runs ahead of the newest checkpoint and of the store (for /metrics).
struct JournalLag {
  int64_t entries_since_checkpoint = 0;  // recorded entries after the newest checkpoint
  int64_t bytes_since_checkpoint = 0;    // their bytes, counting durable entries only
  int64_t undurable_entries = 0;         // recorded, not yet in the store
};

class JournalWriter {
 public:
  // `store` is borrowed and must outlive the writer. A store without a journal
  // (SupportsJournal() false) turns sync and async into memory mode.
  JournalWriter(Env* env, CheckpointStore* store, JournalOptions options);
  ~JournalWriter();

  // The mode in effect.
  Durability durability() const { return options_.durability; }

  // Leaves standby: entries from now on carry `lease` (fenced by the store) and continue the
  // journal after `head` (the position the restored context includes). `checkpoint_sequence`
  // is the journal sequence the newest checkpoint includes (for the tail's size).
  void Activate(const std::optional<LeaseToken>& lease, const JournalPosition& head,
                int64_t checkpoint_sequence, int64_t tail_bytes);

  // What the "standby: ..." refusals before Activate say after "standby: " (by default "this
  // sidecar does not hold the writer lease"), e.g. why a sidecar that holds the lease has not
  // activated yet. Thread-safe.
  void SetStandbyReason(const std::string& reason);

  // Called by ContextState under its lock for each request: with a non-empty `payload`, appends
  // an entry of `kind` to the pending group and returns the new head; with an empty payload (the
  // request changed nothing) returns the current head. kUnavailable "standby: ..." before
  // Activate, kFailedPrecondition "lease lost: ..." after Fence, kUnavailable "journal
  // unavailable: ..." after a failed append (until a checkpoint covers everything recorded).
  StatusOr<JournalPosition> Record(JournalKind kind, const std::string& payload);

  // Waits (sync mode) until `sequence` is durable. Errors: kFailedPrecondition "lease lost: ..."
  // when the append was fenced, kUnavailable when the store failed it (the change is then in
  // memory only until a checkpoint covers it).
  StatusOr<JournalAck> Await(int64_t sequence);

  // Waits (sync mode) until every entry recorded so far is durable, like Await on the head. For
  // a read that must show only what a SIGKILL would keep: read the state, then call this (the
  // head it waits for is at least what the read included). OK at once in async and memory
  // modes. Errors as Await.
  Status AwaitRecorded();

  // Called after a checkpoint including journal sequence `sequence` is durable: entries up to it
  // need not be appended any more, the tail restarts after it and a broken journal is repaired
  // when the checkpoint covers every recorded entry.
  void CheckpointWritten(int64_t sequence);

  // The checkpoint requested when the tail is full (or the journal broke); called on the
  // committing thread with no lock of this writer held. Set before Activate.
  void set_force_checkpoint(std::function<void(const std::string& reason)> f);

  // Asks for a checkpoint without waiting for it, once per checkpoint written, when the tail
  // reaches 7/8 of its bound, and when the checkpoint forced after a failed append did not repair
  // the journal (so that it is retried); called on the committing thread with no lock of this
  // writer held and must return at once. Optional; set before Activate.
  void set_request_checkpoint(std::function<void(const std::string& reason)> f);

  // Confirms the writer lease after each append the store accepted and before the group is
  // answered durable (LeaseKeeper::ConfirmHeld): kFailedPrecondition "lease lost: ..." fences
  // the writer and the group is answered 409 like a fenced append; another error answers it as
  // a failed append. A store whose appends read the lease (SQLite) needs it only as a second
  // check; for one that fences by a marker (Firestore, docs/journal.md) it is what keeps a writer
  // fenced out long ago from answering 2xx. Called on the committing thread with no lock of this
  // writer held. Optional; set before Activate.
  void set_confirm_lease(std::function<Status()> f);

  // Refuses every later change with kFailedPrecondition carrying `reason`.
  void Fence(const Status& reason);

  // Appends what is pending (async mode) and stops the flusher. Later Records fail.
  Status Close();

  // True while a failed append keeps the journal refusing changes and nothing has fenced or
  // closed it: a checkpoint covering every recorded entry repairs it (CheckpointWritten). The
  // sidecar retries that checkpoint with a backoff while this holds.
  bool NeedsRepair() const;
  // OK, or while NeedsRepair() the kUnavailable "journal unavailable: ..." that refuses changes.
  Status RepairReason() const;

  // Whether this sidecar's context is the agent's: kUnavailable "standby: ..." before Activate,
  // kFailedPrecondition "lease lost: ..." after Fence; OK otherwise (a broken journal included:
  // the context in memory is still the latest).
  Status Serving() const;

  // The position of the last recorded entry, and of the last durable one.
  JournalPosition head() const;
  int64_t durable_sequence() const;
  // The current lag (all zero in memory mode, where nothing is recorded).
  JournalLag Lag() const;

 private:
  Status GateLocked() const;
  // Await without its `agentckpt.journal.append` span.
  StatusOr<JournalAck> AwaitDurable(int64_t sequence);
  // Appends pending_ as one group; called with `lock` held, releases it during the store call.
  void CommitLocked(std::unique_lock<std::mutex>& lock);
  // After a commit: wakes its group's waiters and one waiter of the next group (its committer),
  // or, when `everyone`, every waiter.
  void WakeWaitersLocked(bool everyone);
  void FlushLoop();

  Env* env_;
  CheckpointStore* store_;
  JournalOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;  // the async flusher and Close wait here
  // Sync-mode waiters: those of commit number n wait on group_cv_[n % 2] (at most the commit in
  // progress and the next one have waiters), so a commit wakes only the waiters it made durable
  // and the next group's committer, not the whole next group.
  std::condition_variable group_cv_[2];
  int64_t commits_ = 0;         // commits started
  int64_t commit_through_ = 0;  // the last sequence of the newest commit started
  bool active_ = false;
  std::string standby_reason_ = "this sidecar does not hold the writer lease";
  bool closed_ = false;
  std::optional<LeaseToken> lease_;
  Status fenced_;  // kFailedPrecondition once the lease was lost
  Status broken_;  // kUnavailable after a failed append
  bool NeedsRepairLocked() const;
  JournalPosition head_;
  int64_t durable_ = 0;       // highest durable sequence
  int64_t checkpointed_ = 0;  // the journal sequence the newest checkpoint includes
  int64_t failed_from_ = 0;   // entries from here on failed (0: none)
  Status failure_;            // why
  std::vector<JournalEntry> pending_;
  bool committing_ = false;
  std::deque<std::pair<int64_t, int64_t>> tail_;  // (sequence, bytes) after checkpointed_
  int64_t tail_bytes_ = 0;
  int64_t base_tail_bytes_ = 0;  // bytes of entries restored at Activate (not in tail_)
  std::function<void(const std::string&)> force_checkpoint_;
  std::function<void(const std::string&)> request_checkpoint_;
  std::function<Status()> confirm_lease_;
  bool checkpoint_requested_ = false;  // since the newest checkpoint
  std::thread flusher_;
};

}  // namespace agentckpt
