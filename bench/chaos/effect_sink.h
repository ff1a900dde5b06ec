// EffectSink: the harness's side of the reference agent's external system
// (examples/reference_agent/effect_sink.h). It executes each "exec" request by counting it under
// its key and answers "lookup" requests from those counts, so duplicates are counted where the
// effects land, not by the agent. Requests are handled in arrival order on each subscription
// (one per server of a cluster, in one queue group: each request reaches one of them).
//
// Thread-safe.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace chaos {

class EffectSink {
 public:
  struct Execution {
    double t = 0;  // wall-clock Unix ms when executed
    std::string key;
    uint64_t seq = 0;  // the inbox message's stream sequence
    int count = 0;     // executions of `key` so far, this one included
  };

  EffectSink() = default;
  ~EffectSink();
  EffectSink(const EffectSink&) = delete;
  EffectSink& operator=(const EffectSink&) = delete;

  // Connects and serves "sink.<agent>.>": one connection per URL of `urls` (each to that server
  // only, and back to it after a kill), all in one queue group, so NATS hands each request to
  // exactly one of them and, while a server of a cluster is down, to one of the others.
  // kUnavailable if NATS cannot be reached.
  agentckpt::Status Start(const std::vector<std::string>& urls, const std::string& agent);
  // The executions since the last call, oldest first.
  std::vector<Execution> TakeNew();

 private:
  static void OnMessage(natsConnection* nc, natsSubscription*, natsMsg* msg, void* closure);
  std::vector<natsConnection*> ncs_;
  std::vector<natsSubscription*> subs_;
  std::mutex mu_;
  std::map<std::string, int> count_;
  std::vector<Execution> new_;
};

}  // namespace chaos
