#include "cli/store_flags.h"

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "common/env.h"
#include "common/status_macros.h"
#include "crypto/encrypting_store.h"

namespace agentckpt {

void AddStoreFlags(CLI::App* command, StoreFlags* flags) {
  command->add_option("--store", flags->url,
                      "Store URL: sqlite:///path/file.db or firestore://projects/P/databases/D "
                      "(default: $CKPT_STORE, else sqlite://agentckpt-data/AGENT.db)");
  command->add_option("--encryption-key-file", flags->key_file,
                      "Key file of encrypted checkpoints (default: $CKPT_ENCRYPTION_KEY_FILE)");
  command->add_option("--encryption-old-key-files", flags->old_key_files,
                      "Comma-separated older key files, for checkpoints written before a key "
                      "rotation (default: $CKPT_ENCRYPTION_OLD_KEY_FILES)");
}

namespace {

std::string FlagOrEnv(const std::string& flag, const char* variable) {
  if (!flag.empty()) return flag;
  const char* value = std::getenv(variable);
  return value != nullptr ? value : "";
}

}  // namespace

std::string StoreUrlFromFlags(const StoreFlags& flags, const std::string& agent_id) {
  if (!flags.url.empty()) return flags.url;
  const char* env = std::getenv("CKPT_STORE");
  if (env != nullptr && *env != '\0') return env;
  return "sqlite://agentckpt-data/" + agent_id + ".db";
}

StatusOr<std::unique_ptr<CheckpointStore>> OpenStoreFromFlags(const StoreFlags& flags,
                                                              const std::string& agent_id) {
  const std::string url = StoreUrlFromFlags(flags, agent_id);
  const std::string sqlite_prefix = "sqlite://";
  if (url.rfind(sqlite_prefix, 0) == 0) {
    const std::string path = url.substr(sqlite_prefix.size());
    if (!path.empty() && !Env::Default()->FileExists(path)) {
      return NotFoundError("no store at " + path + " (check --store or $CKPT_STORE)");
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<CheckpointStore> store, OpenStore(url));
  return crypto::WrapStoreForEncryption(
      std::move(store), agent_id, FlagOrEnv(flags.key_file, "CKPT_ENCRYPTION_KEY_FILE"),
      FlagOrEnv(flags.old_key_files, "CKPT_ENCRYPTION_OLD_KEY_FILES"), Env::Default());
}

}  // namespace agentckpt
