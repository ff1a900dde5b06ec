// `agentckpt setup-stream`: creates an agent's JetStream inbox stream (file storage, limits
// retention) and its durable pull consumer (explicit acks, deliver all, filtered on the agent's
// subjects), the pair the sidecar reads natsPosition from and replays after. Idempotent: run it
// as often as you like (a Kubernetes Job does it before each rollout).
//
//   agentckpt setup-stream --agent ID [--nats URL] [--stream S] [--consumer C]
//                          [--subjects agent.{agent}.inbox.>] [--max-age 7d] [--replicas 1]
//                          [--nats-creds F | --nats-nkey K --nats-nkey-seed F |
//                           --nats-user U --nats-password P] [--nats-tls-ca F ...] [--json]
//
// Defaults come from the sidecar's environment variables: NATS_URL, AGENT_ID, JS_STREAM,
// JS_CONSUMER, NATS_CREDS, NATS_NKEY, NATS_NKEY_SEED, NATS_USER, NATS_PASSWORD, NATS_TLS_CA,
// NATS_TLS_CERT, NATS_TLS_KEY. Exit codes: 0 created or already as asked, 1 a stream or consumer
// exists with a different configuration (or the server refused), 2 bad arguments, 3 NATS
// unavailable.
//
// SetupStream lives in setup_stream.cc, the argument helpers in setup_stream_args.cc and the
// subcommand class in setup_stream_command.cc. The NATS connection and its flags
// (cli/nats_client.h), shared with `create` and `restore --dry-run`, are implemented in
// setup_stream.cc and setup_stream_command.cc too, so that the tests that compile these files
// directly (tests/k8s) need no other source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/nats_client.h"
#include "common/status.h"
#include "nats/subjects.h"

namespace CLI {
class App;
}

namespace agentckpt {

// The NATS connection options (URL, authentication, TLS, timeout) come from NatsClientOptions.
struct SetupStreamOptions : NatsClientOptions {
  std::string agent_id;
  std::string stream;
  std::string consumer;
  // Comma-separated subjects the stream captures; "{agent}" is replaced by agent_id. Each must
  // lie under agent.{agent}. and must not cover agent.{agent}.checkpoint.* (the sidecar's own
  // subjects, which must never land in the agent's inbox).
  std::string subjects = agentckpt::subjects::kInboxTemplate;
  int64_t max_age_s = 0;  // 0: messages do not expire by age
  int replicas = 1;       // 1-5
};

// What SetupStream found or did (reset by each call).
struct SetupStreamReport {
  bool stream_created = false;    // false: it existed with the asked-for configuration
  bool consumer_created = false;  // likewise
  std::vector<std::string> subjects;
};

// Expands and checks the subjects of `options` ("{agent}" replaced). kInvalidArgument naming the
// offending subject. Thread-safe.
StatusOr<std::vector<std::string>> ExpandSetupSubjects(const SetupStreamOptions& options);

// Parses a duration such as "0", "90s", "30m", "72h", "7d" or "1h30m" into seconds.
// kInvalidArgument on anything else. Thread-safe.
StatusOr<int64_t> ParseDurationSeconds(const std::string& text);

// Connects to NATS and makes sure the stream and the durable consumer exist as described.
// Returns kInvalidArgument for bad options, kUnavailable when NATS cannot be reached,
// kFailedPrecondition when the stream or consumer exists with a different configuration (the
// message lists each difference), kDeadlineExceeded when JetStream does not answer (not enabled,
// or the credentials may not use the $JS.API subjects), kPermissionDenied / kUnauthenticated
// when the server refuses the credentials, kInternal for other server errors. Thread-safe
// (each call has its own connection).
Status SetupStream(const SetupStreamOptions& options, SetupStreamReport* report = nullptr);

// The `setup-stream` subcommand, following the other CLI parts: add it to the app, then run it
// if it was selected.
class SetupStreamCommand {
 public:
  // Adds the subcommand to `app`; defaults are read from the environment now.
  explicit SetupStreamCommand(CLI::App* app);
  // True if `setup-stream` was selected; then Execute() runs it and returns the exit code.
  bool Selected() const;
  int Execute();

 private:
  CLI::App* command_;
  SetupStreamOptions options_;
  std::string max_age_ = "0";
  bool json_ = false;
};

}  // namespace agentckpt
