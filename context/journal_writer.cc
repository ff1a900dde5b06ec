#include "context/journal_writer.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "observability/json_log.h"
#include "tracing/span.h"

namespace agentckpt {

std::string_view DurabilityName(Durability d) {
  switch (d) {
    case Durability::kSync:
      return "sync";
    case Durability::kAsync:
      return "async";
    case Durability::kMemory:
      return "memory";
  }
  return "sync";
}

std::optional<Durability> ParseDurability(std::string_view name) {
  for (Durability d : {Durability::kSync, Durability::kAsync, Durability::kMemory}) {
    if (DurabilityName(d) == name) return d;
  }
  return std::nullopt;
}

JournalWriter::JournalWriter(Env* env, CheckpointStore* store, JournalOptions options)
    : env_(env), store_(store), options_(std::move(options)) {
  head_ = JournalPosition{0, kJournalGenesisSha256};
  if (options_.durability != Durability::kMemory && !store_->SupportsJournal()) {
    LogWarn("the store keeps no journal: CKPT_DURABILITY=memory is in effect",
            {{"requested", std::string(DurabilityName(options_.durability))}});
    options_.durability = Durability::kMemory;
  }
  if (options_.durability == Durability::kAsync) flusher_ = std::thread([this] { FlushLoop(); });
}

JournalWriter::~JournalWriter() { (void)Close(); }

void JournalWriter::set_force_checkpoint(std::function<void(const std::string&)> f) {
  std::lock_guard<std::mutex> lock(mu_);
  force_checkpoint_ = std::move(f);
}

void JournalWriter::set_request_checkpoint(std::function<void(const std::string&)> f) {
  std::lock_guard<std::mutex> lock(mu_);
  request_checkpoint_ = std::move(f);
}

void JournalWriter::set_confirm_lease(std::function<Status()> f) {
  std::lock_guard<std::mutex> lock(mu_);
  confirm_lease_ = std::move(f);
}

void JournalWriter::Activate(const std::optional<LeaseToken>& lease, const JournalPosition& head,
                             int64_t checkpoint_sequence, int64_t tail_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  lease_ = lease;
  head_ = head;
  durable_ = head.sequence;
  checkpointed_ = std::min(checkpoint_sequence, head.sequence);
  base_tail_bytes_ = tail_bytes;
  tail_.clear();
  tail_bytes_ = 0;
  active_ = true;
}

void JournalWriter::SetStandbyReason(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  standby_reason_ = reason;
}

Status JournalWriter::GateLocked() const {
  if (closed_) return UnavailableError("the sidecar is shutting down");
  if (!fenced_.ok()) return fenced_;
  if (!active_) return UnavailableError("standby: " + standby_reason_);
  if (!broken_.ok()) return broken_;
  return OkStatus();
}

Status JournalWriter::Serving() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fenced_.ok()) return fenced_;
  if (!active_) return UnavailableError("standby: " + standby_reason_);
  return OkStatus();
}

StatusOr<JournalPosition> JournalWriter::Record(JournalKind kind, const std::string& payload) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Status gate = GateLocked(); !gate.ok()) return gate;
  if (payload.empty() || options_.durability == Durability::kMemory) return head_;
  JournalEntry e;
  e.agent_id = options_.agent_id;
  e.sequence = head_.sequence + 1;
  e.epoch = lease_ ? lease_->epoch : 0;
  e.kind = kind;
  e.payload = payload;
  e.timestamp_ms = env_->NowUnixMillis();
  e.prev_sha256 = head_.sha256;
  SealJournalEntry(&e);
  head_ = JournalPosition{e.sequence, e.sha256};
  pending_.push_back(std::move(e));
  if (options_.durability == Durability::kAsync) cv_.notify_all();
  return head_;
}

void JournalWriter::CommitLocked(std::unique_lock<std::mutex>& lock) {
  committing_ = true;
  std::vector<JournalEntry> batch;
  batch.swap(pending_);
  const int64_t through = batch.back().sequence;
  ++commits_;
  commit_through_ = through;
  // Entries a checkpoint already includes are durable through it.
  batch.erase(batch.begin(), std::find_if(batch.begin(), batch.end(), [&](const JournalEntry& e) {
                return e.sequence > checkpointed_;
              }));
  std::optional<LeaseToken> lease = lease_;
  std::function<Status()> confirm_lease = confirm_lease_;
  lock.unlock();
  tracing::Span span =
      batch.empty() ? tracing::Span() : tracing::StartChildSpan("agentckpt.store.append_journal");
  span.SetInt("agentckpt.journal.entries", static_cast<int64_t>(batch.size()));
  Status st = batch.empty() ? OkStatus() : store_->AppendJournal(options_.agent_id, batch, lease);
  if (st.ok() && !batch.empty() && confirm_lease) st = confirm_lease();
  span.SetError(st);
  span.End();
  lock.lock();
  std::string force_reason;
  std::string request_reason;
  if (st.ok()) {
    for (const JournalEntry& e : batch) {
      int64_t bytes = JournalEntryBytes(e);
      if (e.sequence > checkpointed_) {
        tail_.emplace_back(e.sequence, bytes);
        tail_bytes_ += bytes;
      }
    }
    durable_ = std::max(durable_, through);
    const int64_t entries = durable_ - checkpointed_;
    const int64_t bytes = base_tail_bytes_ + tail_bytes_;
    if (entries >= options_.max_entries || bytes >= options_.max_bytes) {
      force_reason = "journal_full";
    } else if (!checkpoint_requested_ && request_checkpoint_ &&
               (entries >= options_.max_entries - options_.max_entries / 8 ||
                bytes >= options_.max_bytes - options_.max_bytes / 8)) {
      checkpoint_requested_ = true;
      request_reason = "journal_full";
    }
  } else {
    const bool lost =
        st.code() == StatusCode::kFailedPrecondition && st.message().rfind("lease lost", 0) == 0;
    if (lost) {
      fenced_ = FailedPreconditionError(st.message());
      failure_ = fenced_;
    } else {
      broken_ = UnavailableError("journal unavailable: " + st.message() +
                                 " (the change is in memory only until a checkpoint covers it)");
      failure_ = broken_;
      force_reason = "journal_unavailable";
    }
    failed_from_ = batch.empty() ? through : batch.front().sequence;
    pending_.clear();  // they chain on the failed entries
    LogError("journal append failed",
             {{"agentId", options_.agent_id}, {"reason", st.ToString()}, {"from", failed_from_}});
  }
  // Those now durable return, and unless a checkpoint must be forced first, one waiter of the
  // next group becomes its committer at once (a failed append wakes every waiter: all of them
  // fail).
  const bool force = !force_reason.empty() && force_checkpoint_;
  if (!force) committing_ = false;
  WakeWaitersLocked(/*everyone=*/!st.ok());
  if (!request_reason.empty()) {
    // The checkpoint is written elsewhere; nobody waits for it.
    auto request = request_checkpoint_;
    lock.unlock();
    request(request_reason);
    lock.lock();
  }
  if (force) {
    // Still committing: no group commits until the checkpoint is written, so the tail stays
    // within its bound (the checkpoint includes what is pending meanwhile).
    auto force_checkpoint = force_checkpoint_;
    lock.unlock();
    force_checkpoint(force_reason);
    lock.lock();
    committing_ = false;
    WakeWaitersLocked(/*everyone=*/false);
    if (NeedsRepairLocked() && request_checkpoint_) {
      // The store is still failing: whoever writes requested checkpoints retries it.
      auto request = request_checkpoint_;
      lock.unlock();
      request("journal_unavailable");
      lock.lock();
    }
  }
}

bool JournalWriter::NeedsRepairLocked() const { return !broken_.ok() && fenced_.ok() && !closed_; }

bool JournalWriter::NeedsRepair() const {
  std::lock_guard<std::mutex> lock(mu_);
  return NeedsRepairLocked();
}

Status JournalWriter::RepairReason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return NeedsRepairLocked() ? broken_ : OkStatus();
}

void JournalWriter::WakeWaitersLocked(bool everyone) {
  cv_.notify_all();  // the async flusher and Close
  if (everyone) {
    group_cv_[0].notify_all();
    group_cv_[1].notify_all();
    return;
  }
  // The group just committed returns; of those waiting for the next group, one becomes its
  // committer (the others sleep on until that commit ends).
  group_cv_[commits_ % 2].notify_all();
  if (!committing_ && !pending_.empty()) group_cv_[(commits_ + 1) % 2].notify_one();
}

StatusOr<JournalAck> JournalWriter::Await(int64_t sequence) {
  tracing::Span span = tracing::StartChildSpan("agentckpt.journal.append");
  tracing::SpanScope scope(span);
  span.SetString("gen_ai.agent.id", options_.agent_id);
  span.SetInt("agentckpt.journal.sequence", sequence);
  span.SetString("agentckpt.journal.durability", DurabilityName(options_.durability));
  auto ack = AwaitDurable(sequence);
  if (ack.ok()) {
    span.SetBool("agentckpt.journal.durable", ack->durable);
  } else {
    span.SetError(ack.status());
  }
  return ack;
}

Status JournalWriter::AwaitRecorded() {
  int64_t head = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    head = head_.sequence;
  }
  return AwaitDurable(head).status();
}

StatusOr<JournalAck> JournalWriter::AwaitDurable(int64_t sequence) {
  std::unique_lock<std::mutex> lock(mu_);
  if (options_.durability == Durability::kMemory) return JournalAck{sequence, false};
  for (;;) {
    if (durable_ >= sequence) return JournalAck{sequence, true};
    if (failed_from_ > 0 && sequence >= failed_from_) return failure_;
    if (options_.durability == Durability::kAsync) return JournalAck{sequence, false};
    if (!committing_) {
      if (pending_.empty()) {
        return InternalError("journal sequence " + std::to_string(sequence) +
                             " is neither pending nor durable");
      }
      CommitLocked(lock);
      continue;
    }
    // The commit in progress includes `sequence`, or the next one will.
    group_cv_[(sequence <= commit_through_ ? commits_ : commits_ + 1) % 2].wait(lock);
  }
}

void JournalWriter::FlushLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  const auto period = std::chrono::milliseconds(std::max<int64_t>(1, options_.async_flush_ms));
  while (!closed_) {
    cv_.wait_for(lock, period, [&] { return closed_ || (!pending_.empty() && !committing_); });
    if (!pending_.empty() && !committing_) CommitLocked(lock);
  }
}

void JournalWriter::CheckpointWritten(int64_t sequence) {
  std::lock_guard<std::mutex> lock(mu_);
  if (sequence <= checkpointed_) return;
  checkpointed_ = sequence;
  checkpoint_requested_ = false;
  durable_ = std::max(durable_, sequence);
  while (!tail_.empty() && tail_.front().first <= sequence) {
    tail_bytes_ -= tail_.front().second;
    tail_.pop_front();
  }
  base_tail_bytes_ = 0;
  if (!broken_.ok() && sequence >= head_.sequence) {
    LogInfo("journal repaired by a checkpoint", {{"journalSequence", sequence}});
    broken_ = OkStatus();
    failed_from_ = 0;
  }
  WakeWaitersLocked(/*everyone=*/true);
}

void JournalWriter::Fence(const Status& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fenced_.ok()) fenced_ = FailedPreconditionError(reason.message());
  WakeWaitersLocked(/*everyone=*/true);
}

Status JournalWriter::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_ && !flusher_.joinable()) return failed_from_ > 0 ? failure_ : OkStatus();
    closed_ = true;
    force_checkpoint_ = nullptr;  // the final checkpoint (if any) is the caller's to write
    request_checkpoint_ = nullptr;
  }
  cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  std::unique_lock<std::mutex> lock(mu_);
  while (committing_) cv_.wait(lock);
  if (!pending_.empty()) CommitLocked(lock);
  return failed_from_ > 0 ? failure_ : OkStatus();
}

JournalPosition JournalWriter::head() const {
  std::lock_guard<std::mutex> lock(mu_);
  return head_;
}

int64_t JournalWriter::durable_sequence() const {
  std::lock_guard<std::mutex> lock(mu_);
  return durable_;
}

JournalLag JournalWriter::Lag() const {
  std::lock_guard<std::mutex> lock(mu_);
  JournalLag lag;
  lag.entries_since_checkpoint = std::max<int64_t>(0, head_.sequence - checkpointed_);
  lag.bytes_since_checkpoint = base_tail_bytes_ + tail_bytes_;
  lag.undurable_entries = std::max<int64_t>(0, head_.sequence - durable_);
  return lag;
}

}  // namespace agentckpt
