// EncryptingStore: a CheckpointStore decorator that encrypts each checkpoint's context summary
// before it reaches the store it wraps and decrypts it on the way back (docs/encryption.md).
//
// Without a keyring it is a guard: puts pass through unchanged (plaintext, byte for byte as
// without the decorator) and encrypted documents read as kDataLoss, never as an empty summary;
// GetLatestVerified refuses (kFailedPrecondition, IsMissingKeyRefusal) when the agent's newest
// verified checkpoint is encrypted, instead of falling back to an older plaintext one.
// With a keyring, puts are encrypted under its current key; reads decrypt with whichever key of the
// keyring the document names, and pass unencrypted (schema version 1) documents through as they
// are, so a store can be switched to encryption without migrating it. Callers always see
// plaintext checkpoints whose contentSha256 and sizeBytes are the plaintext's; List reports the
// same, from each encrypted document's envelope (one extra read per listed checkpoint; no
// decryption, so it works without a key). Prune, DeleteExpired and the agent record pass
// straight through.
//
// Thread-safety: as the wrapped store (the keyring is immutable; Env must be thread-safe).
// Errors: as CheckpointStore; a document that does not decrypt is kDataLoss from Get* with a
// message starting "decryption failed: ", and is skipped and reported by GetLatestVerified.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/env.h"
#include "crypto/keyring.h"
#include "store/checkpoint_store.h"

namespace agentckpt::crypto {

class EncryptingStore : public CheckpointStore {
 public:
  // Wraps `inner`; `keyring` nullopt for the plaintext guard. `env` (not owned, outlives this)
  // supplies the nonces.
  EncryptingStore(std::unique_ptr<CheckpointStore> inner, std::optional<Keyring> keyring, Env* env);

  // The wrapped store (for inspection of the stored form).
  CheckpointStore* inner() { return inner_.get(); }
  // Null for the plaintext guard.
  const Keyring* keyring() const { return keyring_ ? &*keyring_ : nullptr; }

  StatusOr<PutResult> Put(const SealedCheckpoint& cp, const PutOptions& opts) override;
  StatusOr<LatestVerified> GetLatestVerified(const std::string& agent_id) override;
  StatusOr<Checkpoint> GetById(const std::string& agent_id,
                               const std::string& checkpoint_id) override;
  StatusOr<Checkpoint> GetBySequence(const std::string& agent_id, int64_t sequence) override;
  StatusOr<std::vector<CheckpointInfo>> List(const std::string& agent_id, int limit) override;
  StatusOr<int> Prune(const std::string& agent_id, int keep) override;
  StatusOr<int> DeleteExpired(int64_t now_ms) override;
  StatusOr<AgentRecord> GetAgent(const std::string& agent_id) override;
  Status SetAgentStatus(const std::string& agent_id, const std::string& status,
                        int64_t now_ms) override;
  Status Ping() override;
  StatusOr<std::vector<std::string>> ListAgents() override { return inner_->ListAgents(); }
  // The writer lease is not encrypted: forwarded as is.
  StatusOr<Lease> AcquireLease(const std::string& agent_id, const std::string& holder,
                               int64_t ttl_ms, int64_t now_ms) override {
    return inner_->AcquireLease(agent_id, holder, ttl_ms, now_ms);
  }
  StatusOr<Lease> AcquireOrTakeOverLease(const std::string& agent_id, const std::string& holder,
                                         int64_t ttl_ms, int64_t now_ms,
                                         const HolderIsDead& is_dead) override {
    return inner_->AcquireOrTakeOverLease(agent_id, holder, ttl_ms, now_ms, is_dead);
  }
  StatusOr<Lease> RenewLease(const std::string& agent_id, const LeaseToken& lease, int64_t ttl_ms,
                             int64_t now_ms) override {
    return inner_->RenewLease(agent_id, lease, ttl_ms, now_ms);
  }
  Status ReleaseLease(const std::string& agent_id, const LeaseToken& lease,
                      int64_t now_ms) override {
    return inner_->ReleaseLease(agent_id, lease, now_ms);
  }
  // Journal: payloads are encrypted under the current key on the way in and decrypted on the way
  // out (an entry that does not decrypt is returned damaged, so a fold stops there).
  bool SupportsJournal() const override { return inner_->SupportsJournal(); }
  Status AppendJournal(const std::string& agent_id, const std::vector<JournalEntry>& entries,
                       const std::optional<LeaseToken>& lease) override;
  StatusOr<std::vector<JournalEntry>> ReadJournal(const std::string& agent_id,
                                                  int64_t after_sequence) override;
  StatusOr<JournalStats> GetJournalStats(const std::string& agent_id) override {
    return inner_->GetJournalStats(agent_id);
  }

 private:
  std::unique_ptr<CheckpointStore> inner_;
  std::optional<Keyring> keyring_;
  Env* env_;
};

// True for the guard's refusal to read an agent whose newest verified checkpoint is encrypted:
// kFailedPrecondition, with a message that starts "CKPT_ENCRYPTION_KEY_FILE: the store holds
// encrypted checkpoints" and names the agent, the sequence and the key id.
bool IsMissingKeyRefusal(const Status& status);

// Wraps `store` in an EncryptingStore: with a keyring when `key_file` is set (old key files need
// a current key), else as the plaintext guard. Without a key and with `check_now`, it first checks
// that the agent's newest verified checkpoint is not encrypted (skipped when the store cannot be
// read now); with `check_now` false it reads nothing, and the guard's own GetLatestVerified
// refuses at the first load instead (the sidecar's start, which loads the newest checkpoint once
// anyway). kInvalidArgument naming CKPT_ENCRYPTION_KEY_FILE or
// CKPT_ENCRYPTION_OLD_KEY_FILES for an unreadable or malformed key file, for old keys without a
// current key, and for a store holding encrypted checkpoints of `agent_id` when no key is set
// (never a silent fallback). Other errors of the store pass through.
StatusOr<std::unique_ptr<CheckpointStore>> WrapStoreForEncryption(
    std::unique_ptr<CheckpointStore> store, const std::string& agent_id,
    const std::string& key_file, const std::string& old_key_files, Env* env, bool check_now = true);

}  // namespace agentckpt::crypto
