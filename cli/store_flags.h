// How the CLI opens a store from its flags. Every subcommand that reads or changes a store
// (list, show, verify, prune, status, restore) adds these flags and opens the store only through
// OpenStoreFromFlags, so a store-opening option (for example a key for encrypted documents) is
// added in one place.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "store/checkpoint_store.h"

namespace CLI {
class App;
}

namespace agentckpt {

struct StoreFlags {
  std::string url;  // --store; empty: $CKPT_STORE, else sqlite://agentckpt-data/AGENT.db
  // --encryption-key-file / --encryption-old-key-files; empty: $CKPT_ENCRYPTION_KEY_FILE /
  // $CKPT_ENCRYPTION_OLD_KEY_FILES, as for the sidecar (docs/encryption.md).
  std::string key_file;
  std::string old_key_files;
};

// Adds --store, --encryption-key-file and --encryption-old-key-files to `command`.
void AddStoreFlags(CLI::App* command, StoreFlags* flags);

// The store URL the flags name for `agent_id` (the default applied). Thread-safe.
std::string StoreUrlFromFlags(const StoreFlags& flags, const std::string& agent_id);

// Opens the store the flags name for `agent_id`, wrapped for encryption at rest exactly as the
// sidecar does: with the key files, summaries are decrypted on read; without them, an agent whose
// newest checkpoint is encrypted is refused. A SQLite file that does not exist is not created:
// kNotFound "no store at PATH" (so a mistyped path cannot look like an empty store). Otherwise
// as OpenStore (kInvalidArgument for a bad URL, kUnavailable when the store cannot be reached)
// and crypto::WrapStoreForEncryption (kInvalidArgument naming the key setting). Thread-safe.
StatusOr<std::unique_ptr<CheckpointStore>> OpenStoreFromFlags(const StoreFlags& flags,
                                                              const std::string& agent_id);

}  // namespace agentckpt
