// NATS client authentication and TLS, set the same way for every connection agentckpt makes:
// the sidecar's link (nats_link.h), the CLI subcommands (cli/nats_client.h) and the tests.
#pragma once

#include <nats/nats.h>

#include <string>

#include "common/status.h"

namespace agentckpt {

// Authentication and TLS settings; an empty string means unused. Named after the environment
// variables that set them (NATS_CREDS, NATS_NKEY_SEED, NATS_NKEY, NATS_USER, NATS_PASSWORD,
// NATS_TLS_CA, NATS_TLS_CERT, NATS_TLS_KEY).
struct NatsAuthOptions {
  std::string creds_file;      // user credentials file (JWT + seed)
  std::string nkey_seed_file;  // file holding the user's NKey seed
  std::string nkey_public;     // the seed's public key; derived from the seed when empty
  std::string user, password;
  std::string tls_ca_file, tls_cert_file, tls_key_file;
};

// Sets `auth` on `opts`: the credentials file, the NKey seed (with its public key, derived from
// the seed file when auth.nkey_public is empty), user and password, and TLS (on when a CA or a
// client certificate is given). kInvalidArgument "<VARIABLE>: <nats.c's reason>" naming the
// first setting nats.c refuses or, for NATS_NKEY_SEED, an unreadable or damaged seed.
// Thread-safe (for distinct `opts`).
Status ApplyNatsAuthOptions(natsOptions* opts, const NatsAuthOptions& auth);

// True when the server asks a client with `auth` to sign its nonce (a credentials file or an
// NKey seed): such a client connects with ConnectRetryingRefusedSignature (nats_connect.h).
bool SignsNonce(const NatsAuthOptions& auth);

// kInvalidArgument "<option>: <nats.c's status text> (<nats.c's last error on this thread>)".
Status NatsOptionError(const std::string& option, natsStatus s);

}  // namespace agentckpt
