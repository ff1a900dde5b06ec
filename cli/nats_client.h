// The NATS connection of the CLI subcommands that talk to NATS (setup-stream, create,
// restore --dry-run): one set of flags and environment defaults for the server URL,
// authentication and TLS, and one way to connect with them.
//
// ConnectNats and CheckNatsClientOptions are implemented in setup_stream.cc and
// AddNatsClientFlags in setup_stream_command.cc, beside the subcommand they came from.
#pragma once

#include <nats/nats.h>

#include <memory>
#include <string>

#include "common/status.h"
#include "nats/nats_connect.h"
#include "nats/nats_options.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace agentckpt {

// Authentication and TLS (NatsAuthOptions, nats/nats_options.h) as for the sidecar: the NKey
// public key is derived from the seed when --nats-nkey is not given.
struct NatsClientOptions : NatsAuthOptions {
  std::string nats_url = "nats://127.0.0.1:4222";
  int timeout_ms = 5000;  // connect, and each request made over the connection
};

// An open connection, closed and destroyed with its handle.
using NatsConnectionPtr = nats_handles::ConnectionPtr;

// Checks that the URL looks like one and that paired options come together (user and password,
// certificate and key; an nkey needs its seed). kInvalidArgument naming the flag. Thread-safe.
Status CheckNatsClientOptions(const NatsClientOptions& options);

// Connects once (no reconnects) with `options` (ConnectNatsOnce, nats/nats_connect.h);
// `client_name` is shown by the server. kInvalidArgument if an option is unusable (bad URL,
// unreadable credentials), kUnauthenticated if the server refuses the credentials, kUnavailable if
// the server cannot be reached. Thread-safe.
StatusOr<NatsConnectionPtr> ConnectNats(const NatsClientOptions& options,
                                        const std::string& client_name);

// Adds --nats, --nats-creds, --nats-nkey, --nats-nkey-seed, --nats-user, --nats-password,
// --nats-tls-ca, --nats-tls-cert and --nats-tls-key to `command`, bound to `options`, after
// reading their defaults from NATS_URL, NATS_CREDS, NATS_NKEY, NATS_NKEY_SEED, NATS_USER,
// NATS_PASSWORD, NATS_TLS_CA, NATS_TLS_CERT and NATS_TLS_KEY (a flag wins over its variable).
// With `url_from_env` false, --nats has no environment default (a subcommand that uses NATS
// only when asked to). Returns the --nats option, so a caller can see whether it was given.
CLI::Option* AddNatsClientFlags(CLI::App* command, NatsClientOptions* options,
                                bool url_from_env = true);

}  // namespace agentckpt
