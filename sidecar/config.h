// SidecarConfig: every setting of `agentckpt run`, from command-line flags and environment
// variables (a flag wins over its variable), validated. docs/configuration.md lists them all.
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
  std::string store_url;                // CKPT_STORE; default sqlite://agentckpt-data/ID.db
  std::string encryption_key_file;       // CKPT_ENCRYPTION_KEY_FILE; empty: no encryption
  std::string encryption_old_key_files;  // CKPT_ENCRYPTION_OLD_KEY_FILES, comma-separated
  std::string http_host = "127.0.0.1";  // CKPT_HTTP_ADDR host part
  int http_port = 8787;                 // CKPT_HTTP_ADDR port part
  std::string http_token_file;          // CKPT_HTTP_TOKEN_FILE; empty: no token required
  std::string http_token;               // the token read from http_token_file
  std::string redact_patterns_file;     // CKPT_REDACT_PATTERNS; extra redaction rules
  int period_s = 300;
  int keep = 48;
  int ttl_days = 7;
  int ttl_sweep_s = 3600;  // CKPT_TTL_SWEEP_S
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
  int64_t http_body_max_bytes = 1 << 20;
  bool restore_on_start = true;
  int lease_ttl_s = 15;             // CKPT_LEASE_TTL_S: writer lease ttl; renewed every ttl/3
  int create_rate_per_s = 10;       // CKPT_CREATE_RATE_PER_S: NATS create requests admitted/s
  int create_burst = 20;            // CKPT_CREATE_BURST: token-bucket burst for those requests
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

// Resolves and validates the configuration. `flags` maps a flag name (as in SettingSpecs) to
// the value given on the command line; a flag that is present wins over its environment
// variable; an empty environment variable counts as unset. Returns kInvalidArgument whose
// message starts with the setting's variable name, e.g. "CKPT_PERIOD_S: expected an integer
// from 1 to 86400, got \"0\"". Thread-safe if `env` is.
StatusOr<SidecarConfig> ResolveConfig(const std::map<std::string, std::string>& flags,
                                      const EnvLookup& env);

}  // namespace agentckpt
