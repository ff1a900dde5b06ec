// Connecting to NATS when the server asks the client to sign a nonce (an NKey seed or a
// credentials file), around a nats.c defect: releases without nats-io/nats.c pull request 705
// (January 2024; Debian 12 ships 3.4.1) base64-encode the signature as if it were a C string,
// so a signature whose first byte is zero is sent empty. The server's nonce is random, so one
// signing connection in 256 is refused as an authorization violation although the
// credentials are right. A new connection brings a new nonce and a new signature.
#pragma once

#include <nats/nats.h>

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

}  // namespace agentckpt
