// The `agentckpt setup-stream` subcommand: flags and environment defaults around SetupStream().
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/setup_stream.h"
#include "cli/terminal_output.h"
#include "sidecar/config.h"

namespace agentckpt {
namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

int ExitCode(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return 2;
    case StatusCode::kUnavailable:
      return 3;
    default:
      return 1;
  }
}

}  // namespace

CLI::Option* AddNatsClientFlags(CLI::App* c, NatsClientOptions* o, bool url_from_env) {
  if (url_from_env) o->nats_url = EnvOr("NATS_URL", o->nats_url);
  o->creds_file = EnvOr("NATS_CREDS", o->creds_file);
  o->nkey_public = EnvOr("NATS_NKEY", o->nkey_public);
  o->nkey_seed_file = EnvOr("NATS_NKEY_SEED", o->nkey_seed_file);
  o->user = EnvOr("NATS_USER", o->user);
  o->password = EnvOr("NATS_PASSWORD", o->password);
  o->tls_ca_file = EnvOr("NATS_TLS_CA", o->tls_ca_file);
  o->tls_cert_file = EnvOr("NATS_TLS_CERT", o->tls_cert_file);
  o->tls_key_file = EnvOr("NATS_TLS_KEY", o->tls_key_file);
  CLI::Option* url =
      c->add_option("--nats", o->nats_url,
                    url_from_env ? "NATS server URL (default: $NATS_URL)" : "NATS server URL");
  if (url_from_env) url->capture_default_str();
  c->add_option("--nats-creds", o->creds_file, "NATS credentials file (default: $NATS_CREDS)");
  c->add_option("--nats-nkey", o->nkey_public,
                "NATS user NKey public key (default: $NATS_NKEY, else derived from the seed)");
  c->add_option("--nats-nkey-seed", o->nkey_seed_file,
                "File holding the NKey seed (default: $NATS_NKEY_SEED)");
  c->add_option("--nats-user", o->user, "NATS user (default: $NATS_USER)");
  c->add_option("--nats-password", o->password,
                "NATS password (default: $NATS_PASSWORD; prefer the variable, flags show in ps)");
  c->add_option("--nats-tls-ca", o->tls_ca_file, "CA file for NATS TLS (default: $NATS_TLS_CA)");
  c->add_option("--nats-tls-cert", o->tls_cert_file,
                "Client certificate file (default: $NATS_TLS_CERT)");
  c->add_option("--nats-tls-key", o->tls_key_file, "Client key file (default: $NATS_TLS_KEY)");
  return url;
}

SetupStreamCommand::SetupStreamCommand(CLI::App* app) {
  SetupStreamOptions& o = options_;
  o.agent_id = EnvOr("AGENT_ID", "");
  o.stream = EnvOr("JS_STREAM", "");
  o.consumer = EnvOr("JS_CONSUMER", "");

  command_ = app->add_subcommand(
      "setup-stream",
      "Create the agent's JetStream inbox stream and durable pull consumer (idempotent; exit 1 "
      "if either exists with a different configuration)");
  CLI::App* c = command_;
  AddNatsClientFlags(c, &o);
  c->add_option("--agent", o.agent_id, "Agent id (default: $AGENT_ID)");
  c->add_option("--stream", o.stream, "Stream name (default: $JS_STREAM)");
  c->add_option("--consumer", o.consumer, "Durable consumer name (default: $JS_CONSUMER)");
  c->add_option("--subjects", o.subjects,
                "Comma-separated subjects the stream captures; {agent} is the agent id")
      ->capture_default_str();
  c->add_option("--max-age", max_age_, "Message age limit: 0 (none), or like 90s, 30m, 72h, 7d")
      ->capture_default_str();
  c->add_option("--replicas", o.replicas, "Stream replicas (1-5)")
      ->check(CLI::Range(1, 5))
      ->capture_default_str();
  c->add_option("--timeout-ms", o.timeout_ms, "Connect and JetStream API timeout")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  c->add_flag("--json", json_, "Machine-readable JSON on stdout");
}

bool SetupStreamCommand::Selected() const { return command_->parsed(); }

int SetupStreamCommand::Execute() {
  StatusOr<int64_t> max_age = ParseDurationSeconds(max_age_);
  if (!max_age.ok()) {
    std::fprintf(stderr, "agentckpt setup-stream: %s\n", max_age.status().ToString().c_str());
    return 2;
  }
  options_.max_age_s = *max_age;
  if (options_.agent_id.empty()) {
    std::fprintf(stderr, "agentckpt setup-stream: --agent (or $AGENT_ID) is required\n");
    return 2;
  }
  if (Status bad = CheckAgentIdSetting(options_.agent_id); !bad.ok()) {
    return ReportSettingError("setup-stream", bad);
  }
  SetupStreamReport report;
  Status s = SetupStream(options_, &report);
  if (!s.ok()) {
    std::fprintf(stderr, "agentckpt setup-stream: %s\n", s.ToString().c_str());
    return ExitCode(s);
  }
  if (json_) {
    const nlohmann::json out = {{"stream", options_.stream},
                                {"streamCreated", report.stream_created},
                                {"consumer", options_.consumer},
                                {"consumerCreated", report.consumer_created},
                                {"subjects", report.subjects}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::string subjects;
  for (const std::string& x : report.subjects) subjects += (subjects.empty() ? "" : ",") + x;
  const int width = static_cast<int>(std::max(options_.stream.size(), options_.consumer.size()));
  std::printf("stream   %-*s  %-7s  subjects %s\n", width, options_.stream.c_str(),
              report.stream_created ? "created" : "exists", subjects.c_str());
  std::printf("consumer %-*s  %-7s  durable pull, explicit ack\n", width, options_.consumer.c_str(),
              report.consumer_created ? "created" : "exists");
  return 0;
}

}  // namespace agentckpt
