// CheckpointWriter: the single, serialised path by which every trigger writes a checkpoint.
//
// A write copies the context (a consistent cut between API requests), reads the agent's
// JetStream consumer position and workspace state, takes the next sequence number
// (store last_sequence + 1), seals the document and puts it in the store; only then does it
// publish checkpoint.created and log one JSON line. On failure it publishes checkpoint.failed
// {operation, trigger, reason}, logs one line and counts the failure by reason; the context is
// never modified. Writes are serialised by one mutex, so concurrent triggers never interleave or
// reuse a sequence number. All methods are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "checkpoint/checkpoint.h"
#include "common/env.h"
#include "common/status.h"
#include "context/context_state.h"
#include "observability/metrics.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

// Where the writer gets the consumer position from (NATS in the sidecar). kUnavailable when it
// cannot be read right now.
using PositionReader = std::function<StatusOr<NatsPosition>()>;
// Where the writer gets the workspace state from (libgit2 on WORKSPACE_DIR).
using WorkspaceReader = std::function<StatusOr<Workspace>()>;
// Where the writer announces results: (event name "checkpoint.created" or "checkpoint.failed",
// JSON payload). Must not throw.
using EventSink = std::function<void(const std::string& event, const nlohmann::json& payload)>;

struct WriterOptions {
  std::string agent_id;
  int keep = 48;
  int ttl_days = 7;
};

struct WriteResult {
  std::string checkpoint_id;
  int64_t sequence_number = 0;
  int64_t size_bytes = 0;
  double duration_ms = 0;
  TriggerReason trigger = TriggerReason::kManual;
  // The checkpoint.created payload / the HTTP 201 body.
  nlohmann::json ToJson() const;
};

class CheckpointWriter {
 public:
  // Pointers are borrowed and must outlive the writer. `position` and `workspace` may be empty
  // functions (not configured): the document then has natsPosition / workspace from the API
  // context (workspace) or null.
  CheckpointWriter(Env* env, CheckpointStore* store, ContextState* context, Metrics* metrics,
                   WriterOptions options, PositionReader position, WorkspaceReader workspace,
                   EventSink events);

  // Writes one checkpoint with `trigger`; `request_task_id` (from a NATS request, may be empty)
  // is logged with it. Returns once the checkpoint is durable. Errors: kAlreadyExists when
  // another writer holds the sequence number (not retried), kUnavailable when the store is
  // unreachable, the writer is closed, on standby or fenced (lease lost), kInvalidArgument if the
  // context cannot form a valid document, kInternal.
  StatusOr<WriteResult> Write(TriggerReason trigger, const std::string& request_task_id = "");

  // Writes a periodic checkpoint only if the context changed since the last checkpoint written
  // by this writer; nullopt when nothing changed. Errors as Write.
  StatusOr<std::optional<WriteResult>> WriteIfChanged(TriggerReason trigger);

  // Writes the last checkpoint (pre_shutdown) and closes the writer: later Write and
  // WriteIfChanged calls fail with kUnavailable, so no checkpoint follows this one. Errors as
  // Write (the writer is closed either way).
  StatusOr<WriteResult> WriteFinal(TriggerReason trigger);

  // A periodic checkpoint forced by the journal (its tail is full, or an append failed):
  // checkpoint.created carries {"reason": reason}. Errors as Write.
  StatusOr<WriteResult> WriteForced(const std::string& reason);

  // Journal (docs/journal.md): every checkpoint records the journal position of its snapshot,
  // deletes the entries only the checkpoint before the previous one needed (so the journal covers
  // the two newest checkpoints), and then calls `on_written` with the position's sequence.
  // `previous` is the sequence the newest stored checkpoint includes. Call before writing.
  void SetJournal(std::function<void(int64_t sequence)> on_written, int64_t previous);

  // The context revision covered by the last successful checkpoint.
  uint64_t last_written_revision() const;

  // Writer lease (see store/checkpoint_store.h). Until SetLease, a writer built with
  // `require_lease` refuses writes with kUnavailable "standby: ..."; after it, every put carries
  // the lease and is fenced by the store. When a put fails because the lease was taken over,
  // the writer publishes checkpoint.failed, calls `on_lost` once (under the writer's lock: it
  // must not call back into the writer) and refuses every later write with kUnavailable
  // "lease lost: ..." without touching the store. Thread-safe.
  void RequireLease(std::function<void(const Status&)> on_lost);
  void SetLease(const LeaseToken& lease);
  // What the "standby: ..." refusals before SetLease say after "standby: " (by default "this
  // sidecar does not hold the writer lease yet"). Thread-safe.
  void SetStandbyReason(const std::string& reason);
  // Stops writing for good (e.g. a renewal found the lease taken over): later writes fail with
  // kUnavailable carrying `reason`.
  void Fence(const Status& reason);
  // OK while writing is allowed; otherwise why not.
  Status WriteGate() const;

 private:
  // One write in an `agentckpt.checkpoint.write` span (WriteTraced inside it).
  StatusOr<WriteResult> WriteLocked(TriggerReason trigger, const std::string& request_task_id);
  StatusOr<WriteResult> WriteTraced(TriggerReason trigger, const std::string& request_task_id);
  // `pos` is the consumer position read before `snap` was taken (see WriteLocked).
  StatusOr<Checkpoint> Build(TriggerReason trigger, const ContextSnapshot& snap,
                             const std::optional<StatusOr<NatsPosition>>& pos);
  void ReportFailure(TriggerReason trigger, const std::string& request_task_id,
                     const Status& status);
  double SecondsSince(int64_t start_micros);

  Env* env_;
  CheckpointStore* store_;
  ContextState* context_;
  Metrics* metrics_;
  WriterOptions options_;
  PositionReader position_;
  WorkspaceReader workspace_;
  EventSink events_;

  mutable std::mutex mu_;  // serialises writes; guards the fields below
  uint64_t last_written_revision_ = 0;
  std::optional<NatsPosition> last_position_;
  bool closed_ = false;
  bool require_lease_ = false;
  std::optional<LeaseToken> lease_;
  std::string standby_reason_ = "this sidecar does not hold the writer lease yet";
  Status fenced_;  // not OK once the lease was lost
  std::function<void(const Status&)> on_lease_lost_;
  std::function<void(int64_t)> on_journal_written_;
  int64_t journal_previous_ = 0;  // the journal sequence the newest checkpoint includes
  std::string forced_reason_;     // set during WriteForced
};

}  // namespace agentckpt
