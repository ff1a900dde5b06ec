// SidecarConfig: every setting of `agentckpt run`, from command-line flags and environment
// variables (a flag wins over its variable), validated. docs/configuration.md lists them all.
// This is the one parser of the settings: the other subcommands read the settings they share
// with `run` (AGENT_ID, WORKSPACE_DIR, CKPT_REDACT_PATTERNS, CKPT_STALE_AFTER_S,
// CKPT_REPLAY_MAX, CKPT_PROMPT_MAX_TOKENS) through it too, so a bad value gets the same message
// everywhere.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace agentckpt {

struct SidecarConfig {
  std::string agent_id;  // AGENT_ID (required)
  std::string nats_url = "nats://127.0.0.1:4222";
  std::string store_url;                 // CKPT_STORE; default sqlite://agentckpt-data/ID.db
  std::string encryption_key_file;       // CKPT_ENCRYPTION_KEY_FILE; empty: no encryption
  std::string encryption_old_key_files;  // CKPT_ENCRYPTION_OLD_KEY_FILES, comma-separated
  std::string http_host = "127.0.0.1";   // CKPT_HTTP_ADDR host part
  int http_port = 8787;                  // CKPT_HTTP_ADDR port part
  std::string http_token_file;           // CKPT_HTTP_TOKEN_FILE; empty: no token required
  std::string http_token;                // the token read from http_token_file
  std::string redact_patterns_file;      // CKPT_REDACT_PATTERNS; extra redaction rules
  int period_s = 300;
  int keep = 48;
  int ttl_days = 7;
  int ttl_sweep_s = 3600;  // CKPT_TTL_SWEEP_S
  int gate_ttl_s = 86400;  // CKPT_GATE_TTL_S: default expiry of an approval gate
  int shutdown_budget_s = 25;  // CKPT_SHUTDOWN_BUDGET_S
  std::string js_stream;  // both empty or both set
  std::string js_consumer;
  std::string workspace_dir;  // empty: no workspace in checkpoints
  std::string nats_creds;     // file paths / values; empty when unset
  std::string nats_nkey_seed;
  std::string nats_nkey;  // NATS_NKEY, or derived from the seed
  std::string nats_user;
  std::string nats_password;
  std::string nats_tls_ca;
  std::string nats_tls_cert;
  std::string nats_tls_key;
  int nats_reconnect_wait_ms = 1000;
  int64_t nats_buffer_bytes = 8 << 20;
  int64_t stale_after_s = 900;
  int replay_max = 50;
  int replay_timeout_ms = 5000;  // CKPT_REPLAY_TIMEOUT_MS
  int prompt_max_tokens = 4000;
  std::string tokenizer = "o200k_base";  // CKPT_TOKENIZER: o200k_base or cl100k_base
  int64_t http_body_max_bytes = 1 << 20;
  bool restore_on_start = true;
  int lease_ttl_s = 15;             // CKPT_LEASE_TTL_S: writer lease ttl; renewed every ttl/3
  int create_rate_per_s = 10;       // CKPT_CREATE_RATE_PER_S: NATS create requests admitted/s
  int create_burst = 20;            // CKPT_CREATE_BURST: token-bucket burst for those requests
  std::string durability = "sync";  // CKPT_DURABILITY: sync, async or memory (docs/journal.md)
  int64_t async_flush_ms = 20;      // CKPT_ASYNC_FLUSH_MS: async mode's flush bound
  int64_t journal_max_entries = 1000;   // CKPT_JOURNAL_MAX_ENTRIES: tail forcing a checkpoint
  int64_t journal_max_bytes = 4 << 20;  // CKPT_JOURNAL_MAX_BYTES: likewise, in bytes
  int64_t ledger_keep = 1000;           // CKPT_LEDGER_KEEP: completed tool-call keys kept
  int64_t ledger_keep_age_s = 86400;    // CKPT_LEDGER_KEEP_AGE_S: and for how long
  std::string log_level = "info";
};

// One setting: its command-line flag (without "--"), its environment variable, its default as
// text ("" when none) and a one-line meaning.
struct SettingSpec {
  std::string flag;
  std::string env;
  std::string default_text;
  std::string help;
};

// All settings, in documentation order.
const std::vector<SettingSpec>& SettingSpecs();

// Reads an environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process environment (getenv).
EnvLookup ProcessEnvLookup();

// Reads settings of SettingSpecs() by their flag name: the value given on the command line when
// there is one, else the environment variable's (an empty variable counts as unset). Errors are
// kInvalidArgument "<VARIABLE> (--<flag>): <why>". `flags` and `env` are borrowed and must
// outlive the reader. Thread-safe if `env` is.
class SettingReader {
 public:
  SettingReader(const std::map<std::string, std::string>& flags, const EnvLookup& env);

  // The raw value, flag first; nullopt when neither is set.
  std::optional<std::string> Raw(const std::string& flag) const;
  // Sets `*out` to the value when there is one (else leaves it). Always OK.
  Status String(const std::string& flag, std::string* out) const;
  // Sets `*out` to the value, which must be an integer from lo to hi ("expected an integer from
  // lo to hi, got \"v\"" otherwise); leaves it when unset.
  Status Int(const std::string& flag, int64_t lo, int64_t hi, int64_t* out) const;
  Status Int32(const std::string& flag, int64_t lo, int64_t hi, int* out) const;
  // true/1/yes or false/0/no ("expected true or false, got \"v\"" otherwise).
  Status Bool(const std::string& flag, bool* out) const;
  // The error of setting `flag`: kInvalidArgument "<VARIABLE> (--<flag>): <why>".
  static Status Bad(const std::string& flag, const std::string& why);

 private:
  const std::map<std::string, std::string>& flags_;
  const EnvLookup& env_;
};

// The settings `agentckpt restore --dry-run` shares with `agentckpt run`, checked as run checks
// them: AGENT_ID (a valid id when set; "" when unset), CKPT_REDACT_PATTERNS (a readable file),
// WORKSPACE_DIR (a directory), CKPT_STALE_AFTER_S, CKPT_REPLAY_MAX, CKPT_PROMPT_MAX_TOKENS.
struct RestoreSettings {
  std::string agent_id;
  std::string redact_patterns_file;
  std::string workspace_dir;
  int64_t stale_after_s = 900;
  int replay_max = 50;
  int prompt_max_tokens = 4000;
  std::string tokenizer = "o200k_base";
};

// Resolves RestoreSettings from `flags` (named as in SettingSpecs) and `env`, in the order and
// with the messages of ResolveConfig. kInvalidArgument as ResolveConfig. Thread-safe if `env` is.
StatusOr<RestoreSettings> ResolveRestoreSettings(const std::map<std::string, std::string>& flags,
                                                 const EnvLookup& env);

// CKPT_HTTP_TOKEN_FILE (--http-token-file) read as `agentckpt run` reads it, for the web console
// (console/): the token ("" when the setting is unset). kInvalidArgument as ResolveConfig for a
// file that cannot be read or is empty. Thread-safe if `env` is.
StatusOr<std::string> ResolveHttpToken(const std::map<std::string, std::string>& flags,
                                       const EnvLookup& env);

// AGENT_ID as `agentckpt run` checks it: OK for "" (unset) or a valid id, else kInvalidArgument
// "AGENT_ID (--agent-id): <why>". For the subcommands that take the agent's id. Thread-safe.
Status CheckAgentIdSetting(const std::string& agent_id);

// Resolves and validates the configuration. `flags` maps a flag name (as in SettingSpecs) to
// the value given on the command line; a flag that is present wins over its environment
// variable; an empty environment variable counts as unset. Returns kInvalidArgument whose
// message starts with the setting's variable name, e.g. "CKPT_PERIOD_S: expected an integer
// from 1 to 86400, got \"0\"". Thread-safe if `env` is.
StatusOr<SidecarConfig> ResolveConfig(const std::map<std::string, std::string>& flags,
                                      const EnvLookup& env);

}  // namespace agentckpt
