// The sidecar at work: start, taking the writer's seat when the lease comes (seeding the context
// from the store and restoring), losing it, the periodic loop, and readiness.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "common/status_macros.h"
#include "common/time_format.h"
#include "crypto/encrypting_store.h"
#include "nats/subjects.h"
#include "observability/json_log.h"
#include "sidecar/restore_service.h"
#include "sidecar/sidecar.h"
#include "store/journal_load.h"

namespace agentckpt {

using nlohmann::json;

json Sidecar::Readiness() {
  Status store = store_->Ping();
  bool nats = nats_->Connected();
  Status gate = writer_->WriteGate();
  json lease = lease_->Describe();
  bool writing = gate.ok() && lease.value("state", "") == "held";
  // A failed append refuses changes until a checkpoint repairs the journal (a full disk): the
  // store may still answer a ping meanwhile.
  Status journal = journal_->RepairReason();
  json out = {{"ready", store.ok() && nats && writing && journal.ok()},
              {"store", store.ok() ? "ok" : store.ToString()},
              {"journal", journal.ok() ? "ok" : journal.message()},
              {"nats", nats ? "connected" : "disconnected"},
              {"lease", lease}};
  if (writing && !journal.ok()) out["reason"] = journal.message();
  if (!writing) {
    std::string state = lease.value("state", "");
    std::string detail = lease.value("detail", "");
    if (!gate.ok() && state != "standby") {
      out["reason"] = gate.message();
    } else if (state == "standby") {
      out["reason"] =
          "standby: " + (detail.empty() ? std::string("waiting for the lease") : detail);
    } else {
      out["reason"] = "lease " + state + (detail.empty() ? "" : ": " + detail);
    }
  }
  return out;
}

void Sidecar::OnLeaseLost(const Status& reason, bool from_renewal) {
  // From a failed put the writer has fenced itself and published checkpoint.failed (and holds
  // its lock: no call back into it); from a renewal both are done here.
  journal_->Fence(FailedPreconditionError(reason.message()));
  if (from_renewal) {
    writer_->Fence(reason);
    json payload = {
        {"operation", "lease"}, {"trigger", "lease_renewal"}, {"reason", reason.ToString()}};
    PublishEvent("checkpoint.failed", payload);
  }
  LogError("this sidecar lost the writer lease and stops writing checkpoints",
           {{"agentId", config_.agent_id}, {"reason", reason.message()}});
}

Status Sidecar::NotActivatedYet(const std::string& what, const std::string& reason) {
  ++activation_failures_;
  const std::string message = "this sidecar holds the writer lease but " + what + " (" + reason +
                              "); it takes up the agent's context once the store answers";
  // The refusals of changes and checkpoints say why until then.
  writer_->SetStandbyReason(message);
  journal_->SetStandbyReason(message);
  // Every failure while they are few, then at powers of two: a long outage does not flood.
  const int n = activation_failures_;
  if (n <= 3 || (n & (n - 1)) == 0) {
    LogWarn("holding the writer lease without taking up the agent's context yet; retrying",
            {{"agentId", config_.agent_id}, {"attempt", n}, {"what", what}, {"reason", reason}});
  }
  return UnavailableError(message);
}

Status Sidecar::Activate(const Lease& lease) {
  std::lock_guard<std::mutex> lock(activate_mu_);
  if (activated_) return OkStatus();
  if (activation_failures_ == 0) {
    LogInfo("writer lease acquired", {{"agentId", config_.agent_id},
                                      {"holder", lease.holder},
                                      {"epoch", lease.epoch},
                                      {"ttlS", config_.lease_ttl_s}});
  }
  // One load serves both the context seed and the restore at start.
  const int64_t load_start = env_->NowMonotonicMicros();
  auto latest = store_->GetLatestVerified(config_.agent_id);
  const double load_ms = static_cast<double>(env_->NowMonotonicMicros() - load_start) / 1000.0;
  if (crypto::IsMissingKeyRefusal(latest.status())) {
    return InvalidArgumentError(latest.status().message());
  }
  // The context continues from the checkpoint plus the journal after it (docs/journal.md). No
  // update was accepted before this point (standby refuses them), so nothing is overwritten.
  // Without either the context would go back in time, and the next checkpoint would make that
  // the agent's newest state: until both are read the sidecar stays out of the writer's seat
  // (the lease keeper calls again). Only "the agent has no checkpoint" starts from empty.
  Checkpoint seed;
  seed.agent_id = config_.agent_id;
  if (latest.ok()) {
    seed = latest->checkpoint;
  } else if (latest.status().code() != StatusCode::kNotFound) {
    return NotActivatedYet("cannot read the agent's newest checkpoint", latest.status().ToString());
  }
  JournalLoad folded = FoldStoredJournal(store_.get(), &seed);
  if (!folded.error.empty()) {
    return NotActivatedYet("cannot read the agent's journal", folded.error);
  }
  if (folded.fold.stopped) {
    // Entries after a damaged one are unusable: the journal continues above every stored
    // sequence, chained to the last good entry, from a checkpoint of the folded context (written
    // below), so the chain restarts on sound ground.
    auto stats = store_->GetJournalStats(config_.agent_id);
    if (!stats.ok()) {
      return NotActivatedYet("cannot read the journal's last sequence", stats.status().ToString());
    }
    if (stats->last_sequence > seed.journal->sequence) {
      seed.journal->sequence = stats->last_sequence;
    }
  }
  activated_ = true;
  if (activation_failures_ > 0) {
    LogInfo("the agent's context is taken up after failed attempts",
            {{"agentId", config_.agent_id}, {"failedAttempts", activation_failures_}});
  }
  context_.Seed(seed);
  LogInfo("context seeded", {{"checkpointId", seed.checkpoint_id},
                             {"sequenceNumber", seed.sequence_number},
                             {"journalSequence", folded.fold.last_sequence},
                             {"journal", DescribeJournalLoad(folded)}});
  // Restore at start, before the API listens (once /healthz answers, GET /v1/restoration has
  // the result), when the store holds any checkpoint of the agent (even if none verifies:
  // the restore then loads again and reports what it skipped).
  if (config_.restore_on_start) {
    auto report = [](const StatusOr<nlohmann::json>& result) {
      if (!result.ok())
        LogError("restore at start failed", {{"reason", result.status().ToString()}});
    };
    if (latest.ok()) {
      PreloadedLatest preloaded{std::move(latest).value(), load_ms};
      report(restore_->Run(&preloaded));
    } else if (auto any = store_->List(config_.agent_id, 1); any.ok() && !any->empty()) {
      report(restore_->Run());
    }
  }
  // The restore says "active"; an agent with a pending gate is still waiting on a human.
  for (const Gate& g : context_.Gates()) {
    if (g.decision) continue;
    PublishEvent("status", {{"agentId", config_.agent_id},
                            {"status", "suspended"},
                            {"at", FormatRfc3339Millis(env_->NowUnixMillis())}});
    break;
  }
  writer_->SetLease(LeaseToken{lease.holder, lease.epoch});
  JournalWriter* journal = journal_.get();
  writer_->SetJournal([journal](int64_t sequence) { journal->CheckpointWritten(sequence); },
                      folded.base_sequence);
  JournalPosition head = seed.journal.value_or(JournalPosition{0, kJournalGenesisSha256});
  journal_->Activate(LeaseToken{lease.holder, lease.epoch}, head, folded.base_sequence,
                     folded.tail_bytes);
  if (folded.fold.stopped) {
    auto r = writer_->WriteForced("journal_damaged");
    (void)r;  // failures are reported by the writer
  }
  return OkStatus();
}

Status Sidecar::Start() {
  auto lease = lease_->TryAcquire();
  if (lease.ok()) {
    Status activated = Activate(*lease);
    if (!activated.ok() && activated.code() != StatusCode::kUnavailable) {
      (void)lease_->Release();  // another sidecar, with the key, need not wait for its expiry
      return activated;
    }
    // kUnavailable: the lease is kept and the lease keeper tries again (NotActivatedYet).
  } else {
    // Not the writer yet: the check the activation's load would have made, made now.
    auto latest = store_->GetLatestVerified(config_.agent_id);
    if (crypto::IsMissingKeyRefusal(latest.status())) {
      return InvalidArgumentError(latest.status().message());
    }
    LogWarn("standby: another sidecar holds the writer lease; retrying",
            {{"agentId", config_.agent_id}, {"reason", lease.status().ToString()}});
  }
  // Subscribed before the API listens: once /readyz answers 200, requests on the NATS subjects
  // (a gate's resolution included) reach this sidecar.
  RETURN_IF_ERROR(nats_->Subscribe(subjects::CheckpointCreate(config_.agent_id),
                                   [this](const NatsRequest& r) { OnCreateRequest(r); }));
  RETURN_IF_ERROR(nats_->Subscribe(subjects::CheckpointRestore(config_.agent_id),
                                   [this](const NatsRequest& r) { OnRestoreRequest(r); }));
  RETURN_IF_ERROR(nats_->Subscribe(subjects::GateResolve(config_.agent_id),
                                   [this](const NatsRequest& r) { OnGateResolveRequest(r); }));
  if (nats_->Connected()) {
    // A round trip, so the server has the subscriptions before /readyz says ready (bounded; when
    // NATS is down the subscriptions are sent on connect).
    Status flushed = nats_->Flush(2000);
    if (!flushed.ok()) LogWarn("nats flush at start failed", {{"reason", flushed.ToString()}});
  }
  // Said before the API answers anything, so it is in the log before the first request.
  const std::string& host = config_.http_host;
  bool loopback =
      host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
  if (!loopback && config_.http_token.empty()) {
    LogWarn("the HTTP API listens beyond loopback without a token; set CKPT_HTTP_TOKEN_FILE",
            {{"http", host + ":" + std::to_string(config_.http_port)}});
  }
  Status listening = http_->Start();
  if (!listening.ok()) {
    return InvalidArgumentError("CKPT_HTTP_ADDR (--http-addr): " + listening.message());
  }
  periodic_ = std::thread([this] { PeriodicLoop(); });
  sweeper_->Start();
  lease_->Start(
      [this](const Lease& l) {
        Status activated = Activate(l);
        if (activated.ok() || activated.code() == StatusCode::kUnavailable) return activated;
        // Encrypted since this standby started, and it has no key: it must not write. The same
        // exit as a refused start would be better, but this runs on the lease thread; a
        // shutdown request ends the process through its usual path.
        LogError("refusing to become the writer; shutting down",
                 {{"agentId", config_.agent_id}, {"reason", activated.message()}});
        ::kill(::getpid(), SIGTERM);
        return activated;
      },
      [this](const Status& reason) { OnLeaseLost(reason, true); });
  // The tables are loaded by now (the restore at start counted with them, or the preload had the
  // whole start to finish). Joined here because the process leaves with _exit after Shutdown,
  // without running the destructor: a thread never joined is a leak under TSan.
  if (tokenizer_preload_.joinable()) tokenizer_preload_.join();
  LogInfo("sidecar started", {{"agentId", config_.agent_id},
                              {"http", config_.http_host + ":" + std::to_string(config_.http_port)},
                              {"store", config_.store_url},
                              {"periodS", config_.period_s},
                              {"restore", RestoreAvailable()},
                              {"lease", lease_->Describe()}});
  return OkStatus();
}

void Sidecar::PeriodicLoop() {
  using Clock = std::chrono::steady_clock;
  // A broken journal refuses every change until a checkpoint covers it (a full disk, a store
  // outage). The loop tries that checkpoint again after 1 s, then 2, 4, ... up to 30 s, so
  // changes are taken again soon after the store recovers, without a failure logged every
  // second of a long outage.
  constexpr auto kFirstRepairRetry = std::chrono::seconds(1);
  constexpr auto kLastRepairRetry = std::chrono::seconds(30);
  auto repair_retry = kFirstRepairRetry;
  bool repairing = false;  // a repair checkpoint failed: the next try is at repair_at
  Clock::time_point repair_at = Clock::now();
  std::unique_lock<std::mutex> lock(periodic_mu_);
  Clock::time_point next_periodic = Clock::now() + std::chrono::seconds(config_.period_s);
  while (!stopping_) {
    // Wakes for the periodic checkpoint, and for the next expiry of a pending gate (a new gate
    // wakes the loop to recompute it), so gates expire durably even when nobody asks.
    Clock::time_point wake = next_periodic;
    int64_t now_ms = env_->NowUnixMillis();
    for (const Gate& g : context_.Gates()) {
      if (g.decision) continue;
      auto at =
          Clock::now() + std::chrono::milliseconds(std::max<int64_t>(0, g.expires_at_ms - now_ms));
      wake = std::min(wake, at);
    }
    if (repairing) wake = std::min(wake, repair_at);
    if (journal_checkpoint_reason_.empty()) periodic_cv_.wait_until(lock, wake);
    if (stopping_) break;
    std::string journal_reason = std::exchange(journal_checkpoint_reason_, std::string());
    if (journal_reason.empty() && repairing && Clock::now() >= repair_at) {
      if (journal_->NeedsRepair()) {
        journal_reason = "journal_unavailable";
      } else {  // another checkpoint repaired it meanwhile
        repairing = false;
        repair_retry = kFirstRepairRetry;
      }
    }
    lock.unlock();
    if (!journal_reason.empty()) {
      auto r = writer_->WriteForced(journal_reason);
      (void)r;  // failures are reported by the writer; the journal forces one at its bound
      repairing = journal_->NeedsRepair();
      if (!repairing) {
        repair_retry = kFirstRepairRetry;
      } else {
        repair_at = Clock::now() + repair_retry;
        repair_retry = std::min(repair_retry * 2, kLastRepairRetry);
      }
    }
    gates_->ExpireDue();
    if (Clock::now() >= next_periodic) {
      auto r = writer_->WriteIfChanged(TriggerReason::kPeriodic);
      (void)r;  // failures are reported by the writer
      next_periodic = Clock::now() + std::chrono::seconds(config_.period_s);
    }
    lock.lock();
  }
}

void Sidecar::RequestJournalCheckpoint(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(periodic_mu_);
    journal_checkpoint_reason_ = reason;
  }
  periodic_cv_.notify_all();
}

}  // namespace agentckpt
