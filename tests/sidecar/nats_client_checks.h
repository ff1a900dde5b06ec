// Checks shared by the NATS authentication tests (TLS, NKey, creds): a sidecar process that
// connected with some credentials is ready, writes, publishes, and answers requests.
#pragma once

#include <nats/nats.h>

namespace agentckpt::testing {

// Polls GET /readyz on `port` until 200 (bounded: 10 s). True once it is.
bool WaitSidecarReady(int port);

// The sidecar on `port` writes a checkpoint on request and its checkpoint.created event arrives
// on `nc` (a client connection of the test's own); a create request sent over `nc` is answered
// with a checkpoint. Failures are reported as gtest failures.
void ExpectSidecarWritesAndPublishes(int port, natsConnection* nc);

}  // namespace agentckpt::testing
