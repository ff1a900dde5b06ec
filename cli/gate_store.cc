#include "cli/gate_store.h"

#include "common/status_macros.h"
#include "journal/journal_entry.h"
#include "sidecar/lease_keeper.h"
#include "store/journal_load.h"

namespace agentckpt {

using nlohmann::json;

namespace {

constexpr int64_t kCliLeaseTtlMs = 30'000;

struct Loaded {
  Checkpoint cp;
  JournalLoad journal;
};

StatusOr<Loaded> Load(CheckpointStore* store, const std::string& agent_id) {
  Loaded l;
  l.cp.agent_id = agent_id;
  auto latest = store->GetLatestVerified(agent_id);
  if (latest.ok()) {
    l.cp = latest->checkpoint;
  } else if (latest.status().code() != StatusCode::kNotFound) {
    return latest.status();
  }
  l.journal = FoldStoredJournal(store, &l.cp);
  if (!l.journal.error.empty()) return DataLossError("journal: " + l.journal.error);
  if (l.journal.fold.stopped) {
    return DataLossError("journal: " + l.journal.fold.stop_reason +
                         " (start the sidecar to repair it, then decide over NATS)");
  }
  return l;
}

StatusOr<std::vector<Gate>> GatesOf(const Checkpoint& cp) {
  if (cp.gates.empty()) return std::vector<Gate>();
  return GatesFromJson(json::parse(cp.gates, nullptr, /*allow_exceptions=*/false));
}

// Appends `g` as one journal entry of `kind` after `*head`, fenced by `lease`; moves `*head`.
// The append counts only once `keeper` confirms the lease is still this command's
// (LeaseKeeper::ConfirmHeld): a store that fences by a marker (Firestore) can accept an entry
// from a writer fenced out long ago, when this process was paused past the lease's window.
Status Append(CheckpointStore* store, Env* env, LeaseKeeper* keeper, const std::string& agent_id,
              JournalPosition* head, const Lease& lease, JournalKind kind, const Gate& g) {
  JournalEntry e;
  e.agent_id = agent_id;
  e.sequence = head->sequence + 1;
  e.epoch = lease.epoch;
  e.kind = kind;
  e.payload = GateToJson(g).dump(-1, ' ', false, json::error_handler_t::replace);
  e.timestamp_ms = env->NowUnixMillis();
  e.prev_sha256 = head->sha256;
  SealJournalEntry(&e);
  RETURN_IF_ERROR(store->AppendJournal(agent_id, {e}, LeaseToken{lease.holder, lease.epoch}));
  if (Status held = keeper->ConfirmHeld(); !held.ok()) {
    return Status(held.code(), held.message() +
                                   " (the decision was written but may not count: run `agentckpt "
                                   "gate list` to see whether it did, and decide again if not)");
  }
  *head = JournalPosition{e.sequence, e.sha256};
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<Gate>> LoadGatesFromStore(CheckpointStore* store,
                                               const std::string& agent_id) {
  ASSIGN_OR_RETURN(Loaded l, Load(store, agent_id));
  return GatesOf(l.cp);
}

StatusOr<Gate> ResolveGateInStore(CheckpointStore* store, Env* env, const std::string& agent_id,
                                  const GateResolution& r) {
  if (!store->SupportsJournal()) {
    return FailedPreconditionError(
        "this store keeps no journal: start the sidecar and decide over NATS");
  }
  // The sidecar's holder form, so a sidecar that was SIGKILLed on this host does not block the
  // decision until its lease runs out (and a live one does: fencing).
  LeaseKeeperOptions lease_options;
  lease_options.agent_id = agent_id;
  lease_options.holder = MakeLeaseHolderId();
  lease_options.ttl_ms = kCliLeaseTtlMs;
  lease_options.holder_is_dead = [holder = lease_options.holder](const std::string& current) {
    return IsDeadLocalHolder(current, holder);
  };
  // Its thread is never started: the command holds the lease for one decision and confirms it
  // after each append.
  LeaseKeeper keeper(env, store, lease_options);
  ASSIGN_OR_RETURN(Lease lease, keeper.TryAcquire());
  auto release = [&] {
    Status s = keeper.Release();
    (void)s;  // an unreleased lease expires after kCliLeaseTtlMs
  };
  auto run = [&]() -> StatusOr<Gate> {
    // Read under the lease: no sidecar appends meanwhile, so the head read is the head.
    ASSIGN_OR_RETURN(Loaded l, Load(store, agent_id));
    ASSIGN_OR_RETURN(std::vector<Gate> gates, GatesOf(l.cp));
    JournalPosition head = l.cp.journal.value_or(JournalPosition{0, kJournalGenesisSha256});
    ASSIGN_OR_RETURN(JournalStats stats, store->GetJournalStats(agent_id));
    if (stats.last_sequence != head.sequence) {
      return DataLossError("journal: stored entries end at " + std::to_string(stats.last_sequence) +
                           ", the fold at " + std::to_string(head.sequence) +
                           "; start the sidecar to repair it");
    }
    const Gate* g = nullptr;
    for (const Gate& x : gates) {
      if (x.gate_id == r.gate_id) g = &x;
    }
    if (g == nullptr) return NotFoundError("gateId: no gate " + r.gate_id);
    Gate current = *g;
    const int64_t now = env->NowUnixMillis();
    if (auto expired = ExpireIfDue(current, now)) {
      RETURN_IF_ERROR(
          Append(store, env, &keeper, agent_id, &head, lease, JournalKind::kGateResolve, *expired));
      current = *expired;
    }
    ASSIGN_OR_RETURN(GateOutcome out, ResolveGate(current, r, now));
    if (out.changed) {
      RETURN_IF_ERROR(
          Append(store, env, &keeper, agent_id, &head, lease, JournalKind::kGateResolve, out.gate));
    }
    return out.gate;
  };
  StatusOr<Gate> result = run();
  release();
  return result;
}

}  // namespace agentckpt
