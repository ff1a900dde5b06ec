// The external system the reference agent's write tool acts on: a service on NATS that the
// harness running the agent owns (bench/chaos/effect_sink.h serves it), so the harness, not the
// agent, counts how often each effect was executed. The agent asks it, by key, whether an effect
// happened when the ledger says a call's outcome is unknown, as a real agent would ask a payment
// API by idempotency key.
//
//   request "sink.<agent>.exec"   {"key", "seq", "result"}  reply {"executions": n}
//   request "sink.<agent>.lookup" {"key"}                   reply {"executed": bool}
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>

#include "common/status.h"

namespace reference_agent {

std::string SinkFilter(const std::string& agent);         // "sink.<agent>.>"
std::string SinkExecSubject(const std::string& agent);    // "sink.<agent>.exec"
std::string SinkLookupSubject(const std::string& agent);  // "sink.<agent>.lookup"

// Executes the effect `key` once (a request; the reply says it was done). Returns how many
// times the sink has now executed `key`. kUnavailable when no reply comes within `timeout_ms`
// (then the effect may or may not have happened), kInternal for a reply that does not parse.
agentckpt::StatusOr<int> SinkExecute(natsConnection* nc, const std::string& agent,
                                     const std::string& key, uint64_t seq,
                                     const std::string& result, int timeout_ms);

// Whether the sink has executed `key`. Errors as SinkExecute.
agentckpt::StatusOr<bool> SinkLookup(natsConnection* nc, const std::string& agent,
                                     const std::string& key, int timeout_ms);

}  // namespace reference_agent
