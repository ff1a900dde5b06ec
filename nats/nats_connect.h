// Connecting to NATS when the server asks the client to sign a nonce (an NKey seed or a
// credentials file), around a nats.c defect: releases without nats-io/nats.c pull request 705
// (January 2024; Debian 12 ships 3.4.1) base64-encode the signature as if it were a C string,
// so a signature whose first byte is zero is sent empty. The server's nonce is random, so one
// signing connection in 256 is refused as an authorization violation although the
// credentials are right. A new connection brings a new nonce and a new signature.
#pragma once

#include <nats/nats.h>

#include <string>

#include "common/status.h"
#include "nats/nats_handles.h"
#include "nats/nats_options.h"

namespace agentckpt {

// How many connections a signing client makes before it reports the credentials refused:
// four refusals in a row caused by that defect happen about once in 4 * 10^9 starts.
inline constexpr int kSignedConnectAttempts = 4;

// natsConnection_Connect(nc, opts), repeated while the server refuses the credentials
// (NATS_CONNECTION_AUTH_FAILED), at most `attempts` connections in all (1 or less: one).
// Wrong credentials are refused every time and still come back as NATS_CONNECTION_AUTH_FAILED;
// any other status ends the loop at once. Returns the last status; sets *connections (if not
// null) to the number of connections made. Thread-safe as natsConnection_Connect is.
natsStatus ConnectRetryingRefusedSignature(natsOptions* opts, int attempts, natsConnection** nc,
                                           int* connections = nullptr);

// New nats.c options for `url` with `auth` (ApplyNatsAuthOptions) and the TLS call lock on
// (ssl_call_lock.h); everything else is nats.c's default (reconnects allowed), for the caller to
// change before ConnectWithOptions. kInvalidArgument naming NATS_URL or the refused setting,
// kInternal if nats.c cannot allocate. Thread-safe.
StatusOr<nats_handles::OptionsPtr> NewNatsOptions(const std::string& url,
                                                  const NatsAuthOptions& auth);

// Connects with `opts` (made by NewNatsOptions for `url` and `auth`), retrying a refused
// signature when `auth` signs the nonce (SignsNonce). kUnauthenticated if the server refuses
// the credentials, kUnavailable otherwise ("cannot connect to NATS at <url, redacted>: ...").
// Thread-safe.
StatusOr<nats_handles::ConnectionPtr> ConnectWithOptions(natsOptions* opts, const std::string& url,
                                                         const NatsAuthOptions& auth);

// NewNatsOptions and ConnectWithOptions with nats.c's defaults: the connection reconnects as nats.c
// does by default. The same Status codes. Thread-safe.
StatusOr<nats_handles::ConnectionPtr> ConnectNatsUrl(const std::string& url,
                                                     const NatsAuthOptions& auth = {});

// Connects once (no reconnects) to `url` with `auth` (ApplyNatsAuthOptions), waiting at most
// `timeout_ms`; `client_name` is shown by the server. Turns the TLS call lock on
// (ssl_call_lock.h) and retries a refused signature when `auth` signs the nonce. Returns the
// open connection, closed and destroyed when the handle goes. kInvalidArgument if an option is
// unusable (bad URL, unreadable credentials), kUnauthenticated if the server refuses the
// credentials, kUnavailable if the server cannot be reached, kInternal if nats.c cannot
// allocate its options. Thread-safe.
StatusOr<nats_handles::ConnectionPtr> ConnectNatsOnce(const std::string& url,
                                                      const NatsAuthOptions& auth,
                                                      const std::string& client_name,
                                                      int timeout_ms);

// `url` with any user:password@ part replaced by ***@, for messages. Thread-safe.
std::string RedactNatsUrl(const std::string& url);

// nats.c's last error text on this thread, or the text of `s` when there is none; for messages.
std::string NatsErrorDetail(natsStatus s);

}  // namespace agentckpt
