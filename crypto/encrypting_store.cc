#include "crypto/encrypting_store.h"

#include <utility>

#include "common/status_macros.h"
#include "crypto/summary_cipher.h"

namespace agentckpt::crypto {
namespace {

// How far back GetLatestVerified looks past checkpoints that do not decrypt.
constexpr int kFallbackListLimit = 10000;

constexpr char kMissingKeyPrefix[] =
    "CKPT_ENCRYPTION_KEY_FILE: the store holds encrypted checkpoints of agent ";

std::string MissingKeyMessage(const Checkpoint& newest) {
  return kMissingKeyPrefix + newest.agent_id + " (newest: sequence " +
         std::to_string(newest.sequence_number) + ", key id " +
         newest.encrypted_context_summary->key_id +
         ") but no encryption key is set; refusing to fall back to plaintext";
}

SkippedCheckpoint SkipOf(const std::string& id, int64_t sequence, const Status& why) {
  return SkippedCheckpoint{id, sequence, why.ToString()};
}

}  // namespace

EncryptingStore::EncryptingStore(std::unique_ptr<CheckpointStore> inner,
                                 std::optional<Keyring> keyring, Env* env)
    : inner_(std::move(inner)), keyring_(std::move(keyring)), env_(env) {}

StatusOr<PutResult> EncryptingStore::Put(const SealedCheckpoint& cp, const PutOptions& opts) {
  if (!keyring_) return inner_->Put(cp, opts);
  ASSIGN_OR_RETURN(SealedCheckpoint stored, EncryptCheckpoint(cp, keyring_->current(), env_));
  return inner_->Put(stored, opts);
}

StatusOr<LatestVerified> EncryptingStore::GetLatestVerified(const std::string& agent_id) {
  ASSIGN_OR_RETURN(LatestVerified latest, inner_->GetLatestVerified(agent_id));
  if (!keyring_ && latest.checkpoint.encrypted_context_summary) {
    // Without a key, an older plaintext checkpoint is not the agent's state: refuse.
    return FailedPreconditionError(MissingKeyMessage(latest.checkpoint));
  }
  StatusOr<Checkpoint> plain = DecryptCheckpoint(latest.checkpoint, keyring());
  if (plain.ok()) {
    latest.checkpoint = std::move(plain).value();
    return latest;
  }
  // The newest verified document does not decrypt: skip it and walk older ones.
  LatestVerified out;
  out.skipped = std::move(latest.skipped);
  int64_t failed_seq = latest.checkpoint.sequence_number;
  out.skipped.push_back(SkipOf(latest.checkpoint.checkpoint_id, failed_seq, plain.status()));
  ASSIGN_OR_RETURN(std::vector<CheckpointInfo> infos, inner_->List(agent_id, kFallbackListLimit));
  for (const CheckpointInfo& info : infos) {
    if (info.sequence_number >= failed_seq) continue;
    StatusOr<Checkpoint> stored = inner_->GetBySequence(agent_id, info.sequence_number);
    if (stored.ok()) {
      StatusOr<Checkpoint> p = DecryptCheckpoint(*stored, keyring());
      if (p.ok()) {
        out.checkpoint = std::move(p).value();
        return out;
      }
      stored = p.status();
    }
    if (stored.status().code() == StatusCode::kNotFound) continue;  // pruned meanwhile
    if (stored.status().code() != StatusCode::kDataLoss &&
        stored.status().code() != StatusCode::kFailedPrecondition) {
      return stored.status();
    }
    out.skipped.push_back(SkipOf(info.checkpoint_id, info.sequence_number, stored.status()));
  }
  return NotFoundError("no checkpoint of agent " + agent_id +
                       " verifies and decrypts; newest skipped: " + out.skipped.front().reason);
}

StatusOr<Checkpoint> EncryptingStore::GetById(const std::string& agent_id,
                                              const std::string& checkpoint_id) {
  ASSIGN_OR_RETURN(Checkpoint stored, inner_->GetById(agent_id, checkpoint_id));
  return DecryptCheckpoint(stored, keyring());
}

StatusOr<Checkpoint> EncryptingStore::GetBySequence(const std::string& agent_id, int64_t sequence) {
  ASSIGN_OR_RETURN(Checkpoint stored, inner_->GetBySequence(agent_id, sequence));
  return DecryptCheckpoint(stored, keyring());
}

StatusOr<std::vector<CheckpointInfo>> EncryptingStore::List(const std::string& agent_id,
                                                            int limit) {
  ASSIGN_OR_RETURN(std::vector<CheckpointInfo> infos, inner_->List(agent_id, limit));
  for (CheckpointInfo& info : infos) {
    // The stored form's size and hash are not the checkpoint's: report the plaintext's, which
    // the envelope carries. A row that does not read stays as listed (List does not verify).
    StatusOr<Checkpoint> stored = inner_->GetBySequence(agent_id, info.sequence_number);
    if (!stored.ok()) {
      if (stored.status().code() == StatusCode::kUnavailable) return stored.status();
      continue;
    }
    if (stored->encrypted_context_summary && stored->checkpoint_id == info.checkpoint_id) {
      info.size_bytes = stored->encrypted_context_summary->plaintext_size_bytes;
      info.content_sha256 = stored->encrypted_context_summary->plaintext_sha256;
    }
  }
  return infos;
}

StatusOr<int> EncryptingStore::Prune(const std::string& agent_id, int keep) {
  return inner_->Prune(agent_id, keep);
}

StatusOr<int> EncryptingStore::DeleteExpired(int64_t now_ms) {
  return inner_->DeleteExpired(now_ms);
}

StatusOr<AgentRecord> EncryptingStore::GetAgent(const std::string& agent_id) {
  return inner_->GetAgent(agent_id);
}

Status EncryptingStore::SetAgentStatus(const std::string& agent_id, const std::string& status,
                                       int64_t now_ms) {
  return inner_->SetAgentStatus(agent_id, status, now_ms);
}

Status EncryptingStore::Ping() { return inner_->Ping(); }

bool IsMissingKeyRefusal(const Status& status) {
  return status.code() == StatusCode::kFailedPrecondition &&
         status.message().rfind(kMissingKeyPrefix, 0) == 0;
}

StatusOr<std::unique_ptr<CheckpointStore>> WrapStoreForEncryption(
    std::unique_ptr<CheckpointStore> store, const std::string& agent_id,
    const std::string& key_file, const std::string& old_key_files, Env* env, bool check_now) {
  if (!key_file.empty()) {
    ASSIGN_OR_RETURN(Keyring keyring, LoadKeyring(env, key_file, old_key_files));
    return std::unique_ptr<CheckpointStore>(
        new EncryptingStore(std::move(store), std::move(keyring), env));
  }
  if (!old_key_files.empty()) {
    return InvalidArgumentError(
        "CKPT_ENCRYPTION_OLD_KEY_FILES: old keys are set but CKPT_ENCRYPTION_KEY_FILE is not "
        "(reading needs the keyring, writing needs a current key)");
  }
  auto guard = std::make_unique<EncryptingStore>(std::move(store), std::nullopt, env);
  if (check_now) {
    // The guard's own load decides; other errors of the store are left to later reads.
    Status loaded = guard->GetLatestVerified(agent_id).status();
    if (IsMissingKeyRefusal(loaded)) return InvalidArgumentError(loaded.message());
  }
  return std::unique_ptr<CheckpointStore>(std::move(guard));
}

}  // namespace agentckpt::crypto
