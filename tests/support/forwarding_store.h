// ForwardingStore: a CheckpointStore that passes every call to another store. Tests derive from
// it to fail, hold, count or pause the one call they are about and leave the rest to the real
// store behind it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/checkpoint_store.h"

namespace agentckpt::testing {

class ForwardingStore : public CheckpointStore {
 public:
  // Borrows `inner`, which must outlive this store.
  explicit ForwardingStore(CheckpointStore* inner) : inner_(inner) {}
  // Owns `inner`.
  explicit ForwardingStore(std::unique_ptr<CheckpointStore> inner)
      : owned_(std::move(inner)), inner_(owned_.get()) {}

  StatusOr<PutResult> Put(const SealedCheckpoint& cp, const PutOptions& o) override {
    return inner_->Put(cp, o);
  }
  StatusOr<LatestVerified> GetLatestVerified(const std::string& a) override {
    return inner_->GetLatestVerified(a);
  }
  StatusOr<Checkpoint> GetById(const std::string& a, const std::string& id) override {
    return inner_->GetById(a, id);
  }
  StatusOr<Checkpoint> GetBySequence(const std::string& a, int64_t s) override {
    return inner_->GetBySequence(a, s);
  }
  StatusOr<std::vector<CheckpointInfo>> List(const std::string& a, int l) override {
    return inner_->List(a, l);
  }
  StatusOr<int> Prune(const std::string& a, int k) override { return inner_->Prune(a, k); }
  StatusOr<int> DeleteExpired(int64_t n) override { return inner_->DeleteExpired(n); }
  StatusOr<AgentRecord> GetAgent(const std::string& a) override { return inner_->GetAgent(a); }
  StatusOr<std::vector<std::string>> ListAgents() override { return inner_->ListAgents(); }
  Status SetAgentStatus(const std::string& a, const std::string& s, int64_t n) override {
    return inner_->SetAgentStatus(a, s, n);
  }
  Status Ping() override { return inner_->Ping(); }
  StatusOr<Lease> AcquireLease(const std::string& a, const std::string& h, int64_t ttl,
                               int64_t now) override {
    return inner_->AcquireLease(a, h, ttl, now);
  }
  StatusOr<Lease> AcquireOrTakeOverLease(const std::string& a, const std::string& h, int64_t ttl,
                                         int64_t now, const HolderIsDead& dead) override {
    return inner_->AcquireOrTakeOverLease(a, h, ttl, now, dead);
  }
  StatusOr<Lease> RenewLease(const std::string& a, const LeaseToken& t, int64_t ttl,
                             int64_t now) override {
    return inner_->RenewLease(a, t, ttl, now);
  }
  Status ReleaseLease(const std::string& a, const LeaseToken& t, int64_t now) override {
    return inner_->ReleaseLease(a, t, now);
  }
  bool SupportsJournal() const override { return inner_->SupportsJournal(); }
  Status AppendJournal(const std::string& a, const std::vector<JournalEntry>& entries,
                       const std::optional<LeaseToken>& lease) override {
    return inner_->AppendJournal(a, entries, lease);
  }
  StatusOr<std::vector<JournalEntry>> ReadJournal(const std::string& a, int64_t after) override {
    return inner_->ReadJournal(a, after);
  }
  StatusOr<JournalStats> GetJournalStats(const std::string& a) override {
    return inner_->GetJournalStats(a);
  }

 protected:
  CheckpointStore* inner() { return inner_; }

 private:
  std::unique_ptr<CheckpointStore> owned_;
  CheckpointStore* inner_;
};

}  // namespace agentckpt::testing
