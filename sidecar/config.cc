#include "sidecar/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/ids.h"
#include "common/status_macros.h"
#include "nats/nkey.h"

namespace agentckpt {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsReadableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status ParseHttpAddr(const std::string& addr, SidecarConfig* cfg) {
  size_t colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return SettingReader::Bad("http-addr", "expected HOST:PORT, got \"" + addr + "\"");
  }
  std::string host = addr.substr(0, colon);
  std::string port = addr.substr(colon + 1);
  int p = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (ec != std::errc() || ptr != port.data() + port.size() || p < 1 || p > 65535) {
    return SettingReader::Bad("http-addr", "port must be 1-65535, got \"" + port + "\"");
  }
  for (char c : host) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' ||
              c == '[' || c == ']';
    if (!ok) return SettingReader::Bad("http-addr", "bad host \"" + host + "\"");
  }
  cfg->http_host = host;
  cfg->http_port = p;
  return OkStatus();
}

// The bearer token in `file` (trailing whitespace removed); "" when `file` is "".
Status ReadHttpToken(const std::string& file, std::string* token) {
  token->clear();
  if (file.empty()) return OkStatus();
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  if (in) text << in.rdbuf();
  if (!in || !IsReadableFile(file)) {
    return SettingReader::Bad("http-token-file", "cannot read \"" + file + "\"");
  }
  *token = text.str();
  while (!token->empty() && std::isspace(static_cast<unsigned char>(token->back()))) {
    token->pop_back();
  }
  if (token->empty()) return SettingReader::Bad("http-token-file", "\"" + file + "\" is empty");
  return OkStatus();
}

// A file setting that is given must name a regular file this process can open for reading, so
// that a missing or unreadable credentials, key or certificate file stops the sidecar before it
// connects anywhere.
Status CheckFile(const std::string& flag, const std::string& path) {
  if (path.empty()) return OkStatus();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return SettingReader::Bad(flag,
                              "no readable file at \"" + path + "\": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return SettingReader::Bad(flag, "no readable file at \"" + path + "\": not a regular file");
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return SettingReader::Bad(flag,
                              "no readable file at \"" + path + "\": " + std::strerror(errno));
  }
  ::close(fd);
  return OkStatus();
}

Status ReadAgentId(const SettingReader& r, std::string* agent_id) {
  RETURN_IF_ERROR(r.String("agent-id", agent_id));
  return CheckAgentIdSetting(*agent_id);
}

Status ReadRedactPatterns(const SettingReader& r, std::string* file) {
  RETURN_IF_ERROR(r.String("redact-patterns", file));
  return CheckFile("redact-patterns", *file);
}

Status ReadWorkspaceDir(const SettingReader& r, std::string* dir) {
  RETURN_IF_ERROR(r.String("workspace-dir", dir));
  if (!dir->empty() && !IsDirectory(*dir)) {
    return SettingReader::Bad("workspace-dir", "no directory at \"" + *dir + "\"");
  }
  return OkStatus();
}

// CKPT_STALE_AFTER_S, CKPT_REPLAY_MAX, CKPT_PROMPT_MAX_TOKENS and CKPT_TOKENIZER, in that order.
Status ReadRestoreLimits(const SettingReader& r, int64_t* stale_after_s, int* replay_max,
                         int* prompt_max_tokens, std::string* tokenizer) {
  RETURN_IF_ERROR(r.Int("stale-after-s", 1, 31536000, stale_after_s));
  RETURN_IF_ERROR(r.Int32("replay-max", 0, 10000, replay_max));
  RETURN_IF_ERROR(r.Int32("prompt-max-tokens", 256, 200000, prompt_max_tokens));
  RETURN_IF_ERROR(r.String("tokenizer", tokenizer));
  if (*tokenizer != "o200k_base" && *tokenizer != "cl100k_base") {
    return SettingReader::Bad("tokenizer",
                              "expected o200k_base or cl100k_base, got \"" + *tokenizer + "\"");
  }
  return OkStatus();
}

}  // namespace

const std::vector<SettingSpec>& SettingSpecs() {
  static const std::vector<SettingSpec> specs = {
      {"agent-id", "AGENT_ID", "", "the agent's id (1-128 of [A-Za-z0-9_-]); required"},
      {"nats-url", "NATS_URL", "nats://127.0.0.1:4222", "NATS server URL(s), comma-separated"},
      {"store", "CKPT_STORE", "sqlite://agentckpt-data/{AGENT_ID}.db",
       "checkpoint store URL: sqlite:///abs/path.db, sqlite://rel/path.db or "
       "firestore://projects/P/databases/D"},
      {"encryption-key-file", "CKPT_ENCRYPTION_KEY_FILE", "",
       "file with the AES-256 key (64 hex or 44 base64 characters) that encrypts context "
       "summaries at rest; unset: no encryption (docs/encryption.md)"},
      {"encryption-old-key-files", "CKPT_ENCRYPTION_OLD_KEY_FILES", "",
       "comma-separated key files kept for reading after a key rotation"},
      {"http-addr", "CKPT_HTTP_ADDR", "127.0.0.1:8787", "HOST:PORT of the local HTTP API"},
      {"http-token-file", "CKPT_HTTP_TOKEN_FILE", "",
       "file holding the bearer token the HTTP API requires (all but /healthz, /readyz, "
       "/metrics); unset: no token (docs/security.md)"},
      {"redact-patterns", "CKPT_REDACT_PATTERNS", "",
       "file of extra redaction rules, one name=regex per line (docs/security.md)"},
      {"period-s", "CKPT_PERIOD_S", "300", "seconds between periodic checkpoints (1-86400)"},
      {"keep", "CKPT_KEEP", "48", "checkpoints kept per agent (1-10000)"},
      {"shutdown-budget-s", "CKPT_SHUTDOWN_BUDGET_S", "25",
       "seconds from SIGTERM to exit, the pre_shutdown checkpoint's store retries included; "
       "keep it under the pod's grace period (3-3600)"},
      {"ttl-days", "CKPT_TTL_DAYS", "7", "days until a checkpoint expires (1-3650)"},
      {"ttl-sweep-s", "CKPT_TTL_SWEEP_S", "3600",
       "seconds between deletions of expired checkpoints (60-86400)"},
      {"gate-ttl-s", "CKPT_GATE_TTL_S", "86400",
       "seconds until an approval gate without expiresAt/ttlSeconds expires (1-31536000)"},
      {"js-stream", "JS_STREAM", "", "the agent's JetStream inbox stream (with JS_CONSUMER)"},
      {"js-consumer", "JS_CONSUMER", "", "the agent's durable consumer on JS_STREAM"},
      {"workspace-dir", "WORKSPACE_DIR", "", "the agent's git working tree (optional)"},
      {"nats-creds", "NATS_CREDS", "", "NATS user credentials file (JWT + seed)"},
      {"nats-nkey-seed", "NATS_NKEY_SEED", "", "file holding the NATS user NKey seed"},
      {"nats-nkey", "NATS_NKEY", "",
       "the NATS user NKey public key; derived from NATS_NKEY_SEED when unset"},
      {"nats-user", "NATS_USER", "", "NATS user name (with NATS_PASSWORD)"},
      {"nats-password", "NATS_PASSWORD", "", "NATS password (with NATS_USER)"},
      {"nats-tls-ca", "NATS_TLS_CA", "", "CA certificate file for the NATS server's TLS"},
      {"nats-tls-cert", "NATS_TLS_CERT", "", "client certificate file (with NATS_TLS_KEY)"},
      {"nats-tls-key", "NATS_TLS_KEY", "", "client private key file (with NATS_TLS_CERT)"},
      {"nats-reconnect-wait-ms", "CKPT_NATS_RECONNECT_WAIT_MS", "1000",
       "wait between NATS reconnect attempts (10-60000)"},
      {"nats-buffer-bytes", "CKPT_NATS_BUFFER_BYTES", "8388608",
       "bytes of events buffered while NATS is down (0-1073741824)"},
      {"stale-after-s", "CKPT_STALE_AFTER_S", "900",
       "a checkpoint older than this is restored as stale (1-31536000)"},
      {"replay-max", "CKPT_REPLAY_MAX", "50", "messages replayed on restore at most (0-10000)"},
      {"replay-timeout-ms", "CKPT_REPLAY_TIMEOUT_MS", "5000",
       "deadline of the replay phase of a restore (100-600000)"},
      {"prompt-max-tokens", "CKPT_PROMPT_MAX_TOKENS", "4000",
       "restoration prompt size limit in tokens (256-200000)"},
      {"tokenizer", "CKPT_TOKENIZER", "o200k_base",
       "encoding the prompt's tokens are counted in: o200k_base or cl100k_base"},
      {"http-body-max-bytes", "CKPT_HTTP_BODY_MAX_BYTES", "1048576",
       "largest accepted HTTP request body (1024-67108864)"},
      {"restore-on-start", "CKPT_RESTORE_ON_START", "true",
       "restore at start when the store holds a checkpoint"},
      {"lease-ttl-s", "CKPT_LEASE_TTL_S", "15",
       "writer lease time-to-live, renewed every third of it; a standby sidecar takes over "
       "after this long when the holder dies (1-3600)"},
      {"create-rate-per-s", "CKPT_CREATE_RATE_PER_S", "10",
       "checkpoint.create requests admitted per second; more get \"rate_limited\" (1-10000)"},
      {"create-burst", "CKPT_CREATE_BURST", "20",
       "checkpoint.create requests admitted at once before the rate applies (1-100000)"},
      {"durability", "CKPT_DURABILITY", "sync",
       "when a context update is durable: sync (before the reply), async (within "
       "CKPT_ASYNC_FLUSH_MS after it) or memory (at the next checkpoint; docs/journal.md)"},
      {"async-flush-ms", "CKPT_ASYNC_FLUSH_MS", "20",
       "async durability: an update is in the journal this long after its reply at most (1-10000)"},
      {"journal-max-entries", "CKPT_JOURNAL_MAX_ENTRIES", "1000",
       "journal entries after the newest checkpoint that force a checkpoint (1-1000000)"},
      {"journal-max-bytes", "CKPT_JOURNAL_MAX_BYTES", "4194304",
       "journal bytes after the newest checkpoint that force a checkpoint (4096-1073741824)"},
      {"ledger-keep", "CKPT_LEDGER_KEEP", "1000",
       "completed tool-call keys the ledger keeps for deduplication (1-1000000)"},
      {"ledger-keep-age-s", "CKPT_LEDGER_KEEP_AGE_S", "86400",
       "seconds a completed tool-call key is kept for deduplication (60-31536000)"},
      {"log-level", "CKPT_LOG_LEVEL", "info", "debug, info, warn or error"},
  };
  return specs;
}

EnvLookup ProcessEnvLookup() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Status CheckAgentIdSetting(const std::string& agent_id) {
  if (agent_id.empty()) return OkStatus();
  if (Status s = ValidateAgentId(agent_id); !s.ok()) {
    return SettingReader::Bad("agent-id", s.message());
  }
  return OkStatus();
}

StatusOr<RestoreSettings> ResolveRestoreSettings(const std::map<std::string, std::string>& flags,
                                                 const EnvLookup& env) {
  SettingReader r(flags, env);
  RestoreSettings settings;
  RETURN_IF_ERROR(ReadAgentId(r, &settings.agent_id));
  RETURN_IF_ERROR(ReadRedactPatterns(r, &settings.redact_patterns_file));
  RETURN_IF_ERROR(ReadWorkspaceDir(r, &settings.workspace_dir));
  RETURN_IF_ERROR(ReadRestoreLimits(r, &settings.stale_after_s, &settings.replay_max,
                                    &settings.prompt_max_tokens, &settings.tokenizer));
  return settings;
}

StatusOr<SidecarConfig> ResolveConfig(const std::map<std::string, std::string>& flags,
                                      const EnvLookup& env) {
  SettingReader r(flags, env);
  SidecarConfig c;
  for (const auto& [flag, value] : flags) {
    bool known = false;
    for (const SettingSpec& s : SettingSpecs()) known = known || s.flag == flag;
    if (!known) return InvalidArgumentError("--" + flag + ": unknown setting");
  }
  RETURN_IF_ERROR(r.String("agent-id", &c.agent_id));
  if (c.agent_id.empty()) return SettingReader::Bad("agent-id", "required");
  RETURN_IF_ERROR(CheckAgentIdSetting(c.agent_id));
  RETURN_IF_ERROR(r.String("nats-url", &c.nats_url));
  if (c.nats_url.find("://") == std::string::npos) {
    return SettingReader::Bad("nats-url",
                              "expected a URL like nats://host:4222, got \"" + c.nats_url + "\"");
  }
  c.store_url = "sqlite://agentckpt-data/" + c.agent_id + ".db";
  RETURN_IF_ERROR(r.String("store", &c.store_url));
  if (c.store_url.rfind("sqlite://", 0) != 0 && c.store_url.rfind("firestore://", 0) != 0 &&
      c.store_url.rfind("jetstream://", 0) != 0) {
    return SettingReader::Bad("store",
                              "expected sqlite://PATH, firestore://projects/P/databases/D or "
                              "jetstream://[HOST:PORT,...]/[PREFIX], got \"" +
                                  c.store_url + "\"");
  }
  if (c.store_url == "sqlite://" || c.store_url == "sqlite:///") {
    return SettingReader::Bad("store", "missing path");
  }
  RETURN_IF_ERROR(r.String("encryption-key-file", &c.encryption_key_file));
  RETURN_IF_ERROR(r.String("encryption-old-key-files", &c.encryption_old_key_files));
  if (c.encryption_key_file.empty() && !c.encryption_old_key_files.empty()) {
    return SettingReader::Bad(
        "encryption-old-key-files",
        "old keys need CKPT_ENCRYPTION_KEY_FILE (the key new checkpoints use)");
  }
  std::string addr = "127.0.0.1:8787";
  RETURN_IF_ERROR(r.String("http-addr", &addr));
  RETURN_IF_ERROR(ParseHttpAddr(addr, &c));
  RETURN_IF_ERROR(r.String("http-token-file", &c.http_token_file));
  RETURN_IF_ERROR(ReadHttpToken(c.http_token_file, &c.http_token));
  RETURN_IF_ERROR(ReadRedactPatterns(r, &c.redact_patterns_file));
  RETURN_IF_ERROR(r.Int32("period-s", 1, 86400, &c.period_s));
  RETURN_IF_ERROR(r.Int32("keep", 1, 10000, &c.keep));
  RETURN_IF_ERROR(r.Int32("lease-ttl-s", 1, 3600, &c.lease_ttl_s));
  RETURN_IF_ERROR(r.Int32("create-rate-per-s", 1, 10000, &c.create_rate_per_s));
  RETURN_IF_ERROR(r.Int32("create-burst", 1, 100000, &c.create_burst));
  RETURN_IF_ERROR(r.Int32("ttl-days", 1, 3650, &c.ttl_days));
  RETURN_IF_ERROR(r.String("durability", &c.durability));
  if (c.durability != "sync" && c.durability != "async" && c.durability != "memory") {
    return SettingReader::Bad("durability",
                         "expected sync, async or memory, got \"" + c.durability + "\"");
  }
  RETURN_IF_ERROR(r.Int("async-flush-ms", 1, 10000, &c.async_flush_ms));
  RETURN_IF_ERROR(r.Int("journal-max-entries", 1, 1000000, &c.journal_max_entries));
  RETURN_IF_ERROR(r.Int("journal-max-bytes", 4096, int64_t{1} << 30, &c.journal_max_bytes));
  RETURN_IF_ERROR(r.Int("ledger-keep", 1, 1000000, &c.ledger_keep));
  RETURN_IF_ERROR(r.Int("ledger-keep-age-s", 60, 31536000, &c.ledger_keep_age_s));
  RETURN_IF_ERROR(r.Int32("ttl-sweep-s", 60, 86400, &c.ttl_sweep_s));
  RETURN_IF_ERROR(r.Int32("gate-ttl-s", 1, 31536000, &c.gate_ttl_s));
  RETURN_IF_ERROR(r.Int32("shutdown-budget-s", 3, 3600, &c.shutdown_budget_s));
  RETURN_IF_ERROR(r.String("js-stream", &c.js_stream));
  RETURN_IF_ERROR(r.String("js-consumer", &c.js_consumer));
  if (c.js_stream.empty() != c.js_consumer.empty()) {
    return SettingReader::Bad(c.js_stream.empty() ? "js-stream" : "js-consumer",
                              "JS_STREAM and JS_CONSUMER must be set together");
  }
  RETURN_IF_ERROR(ReadWorkspaceDir(r, &c.workspace_dir));
  RETURN_IF_ERROR(r.String("nats-creds", &c.nats_creds));
  RETURN_IF_ERROR(CheckFile("nats-creds", c.nats_creds));
  RETURN_IF_ERROR(r.String("nats-nkey-seed", &c.nats_nkey_seed));
  RETURN_IF_ERROR(CheckFile("nats-nkey-seed", c.nats_nkey_seed));
  RETURN_IF_ERROR(r.String("nats-nkey", &c.nats_nkey));
  if (!c.nats_nkey.empty() && c.nats_nkey_seed.empty()) {
    return SettingReader::Bad("nats-nkey", "NATS_NKEY needs NATS_NKEY_SEED");
  }
  if (!c.nats_nkey_seed.empty()) {
    std::ifstream in(c.nats_nkey_seed);
    std::stringstream text;
    text << in.rdbuf();
    auto derived = NKeyPublicFromSeedText(text.str());
    if (!derived.ok()) return SettingReader::Bad("nats-nkey-seed", derived.status().message());
    if (!c.nats_nkey.empty() && c.nats_nkey != *derived) {
      return SettingReader::Bad("nats-nkey", "does not match the public key of NATS_NKEY_SEED");
    }
    c.nats_nkey = *derived;
  }
  if (!c.nats_creds.empty() && !c.nats_nkey_seed.empty()) {
    return SettingReader::Bad("nats-nkey-seed", "NATS_CREDS and NATS_NKEY_SEED are exclusive");
  }
  RETURN_IF_ERROR(r.String("nats-user", &c.nats_user));
  RETURN_IF_ERROR(r.String("nats-password", &c.nats_password));
  if (c.nats_user.empty() != c.nats_password.empty()) {
    return SettingReader::Bad(c.nats_user.empty() ? "nats-user" : "nats-password",
                              "NATS_USER and NATS_PASSWORD must be set together");
  }
  RETURN_IF_ERROR(r.String("nats-tls-ca", &c.nats_tls_ca));
  RETURN_IF_ERROR(CheckFile("nats-tls-ca", c.nats_tls_ca));
  RETURN_IF_ERROR(r.String("nats-tls-cert", &c.nats_tls_cert));
  RETURN_IF_ERROR(CheckFile("nats-tls-cert", c.nats_tls_cert));
  RETURN_IF_ERROR(r.String("nats-tls-key", &c.nats_tls_key));
  RETURN_IF_ERROR(CheckFile("nats-tls-key", c.nats_tls_key));
  if (c.nats_tls_cert.empty() != c.nats_tls_key.empty()) {
    return SettingReader::Bad(c.nats_tls_cert.empty() ? "nats-tls-cert" : "nats-tls-key",
                              "NATS_TLS_CERT and NATS_TLS_KEY must be set together");
  }
  RETURN_IF_ERROR(r.Int32("nats-reconnect-wait-ms", 10, 60000, &c.nats_reconnect_wait_ms));
  RETURN_IF_ERROR(r.Int("nats-buffer-bytes", 0, int64_t{1} << 30, &c.nats_buffer_bytes));
  RETURN_IF_ERROR(ReadRestoreLimits(r, &c.stale_after_s, &c.replay_max, &c.prompt_max_tokens,
                                    &c.tokenizer));
  RETURN_IF_ERROR(r.Int32("replay-timeout-ms", 100, 600000, &c.replay_timeout_ms));
  RETURN_IF_ERROR(r.Int("http-body-max-bytes", 1024, int64_t{64} << 20, &c.http_body_max_bytes));
  RETURN_IF_ERROR(r.Bool("restore-on-start", &c.restore_on_start));
  RETURN_IF_ERROR(r.String("log-level", &c.log_level));
  if (c.log_level != "debug" && c.log_level != "info" && c.log_level != "warn" &&
      c.log_level != "error") {
    return SettingReader::Bad("log-level",
                              "expected debug, info, warn or error, got \"" + c.log_level + "\"");
  }
  return c;
}

StatusOr<std::string> ResolveHttpToken(const std::map<std::string, std::string>& flags,
                                       const EnvLookup& env) {
  SettingReader r(flags, env);
  std::string file, token;
  RETURN_IF_ERROR(r.String("http-token-file", &file));
  RETURN_IF_ERROR(ReadHttpToken(file, &token));
  return token;
}

}  // namespace agentckpt
