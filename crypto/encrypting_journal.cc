// EncryptingStore's journal methods (see crypto/encrypting_store.h).
#include "common/status_macros.h"
#include "crypto/encrypting_store.h"
#include "crypto/summary_cipher.h"

namespace agentckpt::crypto {

Status EncryptingStore::AppendJournal(const std::string& agent_id,
                                      const std::vector<JournalEntry>& entries,
                                      const std::optional<LeaseToken>& lease) {
  if (!keyring_) return inner_->AppendJournal(agent_id, entries, lease);
  std::vector<JournalEntry> stored;
  stored.reserve(entries.size());
  for (const JournalEntry& e : entries) {
    ASSIGN_OR_RETURN(JournalEntry enc, EncryptJournalEntry(e, keyring_->current(), env_));
    stored.push_back(std::move(enc));
  }
  return inner_->AppendJournal(agent_id, stored, lease);
}

StatusOr<std::vector<JournalEntry>> EncryptingStore::ReadJournal(const std::string& agent_id,
                                                                 int64_t after_sequence) {
  ASSIGN_OR_RETURN(std::vector<JournalEntry> entries,
                   inner_->ReadJournal(agent_id, after_sequence));
  for (JournalEntry& e : entries) {
    StatusOr<JournalEntry> plain = DecryptJournalEntry(e, keyring());
    if (plain.ok()) {
      e = std::move(plain).value();
    } else {
      e.sha256.clear();  // damaged: the fold stops here and reports it
      e.payload = plain.status().message();
    }
  }
  return entries;
}

}  // namespace agentckpt::crypto
