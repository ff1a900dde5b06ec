// Encryption of a checkpoint's context summary with AES-256-GCM (OpenSSL EVP), and the stored
// form that carries it (schema version 2, docs/encryption.md).
//
// The plaintext is the canonical JSON of contextSummary. The additional authenticated data binds
// the ciphertext to its checkpoint: algorithm, key id, agentId, checkpointId, sequenceNumber and
// the plaintext document's contentSha256, so a ciphertext moved to another checkpoint, or a
// document whose other fields were changed, does not decrypt. The stored document is sealed like
// any other (its own contentSha256 over its own canonical form), so every store verifies it
// unchanged; decryption then re-seals the plaintext document and requires its hash to equal
// plaintextSha256, which proves both the decryption and the content.
// All functions are thread-safe and never throw.
#pragma once

#include <string>

#include "checkpoint/canonical.h"
#include "common/env.h"
#include "common/status.h"
#include "crypto/keyring.h"
#include "journal/journal_entry.h"

namespace agentckpt::crypto {

// The stored form of `plain` (a sealed, unencrypted checkpoint) encrypted under `key` with a
// fresh 96-bit nonce from env->RandomBytes. kInvalidArgument if `plain` is already encrypted or
// not sealed; kInternal if the random source or OpenSSL fails.
StatusOr<SealedCheckpoint> EncryptCheckpoint(const SealedCheckpoint& plain,
                                             const EncryptionKey& key, Env* env);

// The plaintext checkpoint (schema version 1, contentSha256 of the plaintext) of a stored
// document. A document without encryptedContextSummary is returned as it is. kDataLoss whose
// message starts with "decryption failed: " if `keyring` is null (no key configured) or does not
// hold the document's key id, the tag does not
// verify (wrong key, or a changed ciphertext, nonce or bound field), or the plaintext does not
// decode or hash to plaintextSha256.
StatusOr<Checkpoint> DecryptCheckpoint(const Checkpoint& stored, const Keyring* keyring);

// Journal entries at rest (docs/journal.md): the payload is replaced by
// {"agentckptEncrypted":{"alg","keyId","nonce","ciphertext"}} (AES-256-GCM, AAD = agentId,
// sequence and the entry's sha256, so a payload moved to another entry does not decrypt). The
// hash chain covers the plaintext entry. kInternal if the random source or OpenSSL fails.
StatusOr<JournalEntry> EncryptJournalEntry(const JournalEntry& plain, const EncryptionKey& key,
                                           Env* env);
// True when the entry's payload is in the encrypted form.
bool IsEncryptedJournalEntry(const JournalEntry& e);
// The plaintext entry; an unencrypted entry is returned as it is. kDataLoss "decryption failed:
// ..." without a keyring, with an unknown key id, or when authentication fails.
StatusOr<JournalEntry> DecryptJournalEntry(const JournalEntry& stored, const Keyring* keyring);

}  // namespace agentckpt::crypto
