// IsFailoverShift: tells a change of the agent's durable consumer that a nats-server failover
// makes from one that a restore would have made (a restore must not touch the consumer).
#pragma once

#include <cstdint>
#include <set>

#include "bench/chaos/nats_observer.h"

namespace chaos {

// True if the durable consumer went from `before` to `after` in a way no restore can: nothing
// delivered, none of it counted as redelivered more often, the ack floor lower or raised only
// over messages whose ack the server had confirmed to an agent before the crash, fewer pending
// acks only by such acks, and no fewer messages pending. A consumer leader of nats-server 2.9
// elected after a nats-server kill counts from its own copy of the state, which can be behind
// (seen: redelivered 1 -> 0, right after a server was killed during the restore) or can get an
// ack the earlier leader confirmed but had not yet replicated (seen: ack floor 7 -> 8 and ack
// pending 2 -> 1 after the agent's confirmed ack of message 8 and a kill of the leader 80 ms
// later, with the old leader back during the restore).
// Pure; thread-safe.
bool IsFailoverShift(const ConsumerState& before, const ConsumerState& after,
                     const std::set<uint64_t>& confirmed_acks);

}  // namespace chaos
