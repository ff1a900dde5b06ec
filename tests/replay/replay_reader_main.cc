// replay_reader URL STREAM CONSUMER: runs JetStreamReplaySource::ReadSince from sequence 0 over
// and over until it is killed. A helper for the crash test: it is SIGKILLed mid-read.
#include <nats/nats.h>

#include <chrono>
#include <cstdio>

#include "nats/nats_connect.h"
#include "replay/jetstream_replay.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: replay_reader URL STREAM CONSUMER\n");
    return 2;
  }
  auto connected = agentckpt::ConnectNatsUrl(argv[1]);
  if (!connected.ok()) {
    std::fprintf(stderr, "replay_reader: cannot connect to %s\n", argv[1]);
    return 1;
  }
  natsConnection* nc = connected->release();
  agentckpt::JetStreamReplaySource source(nc, std::chrono::seconds(60));
  agentckpt::NatsPosition position;
  position.stream_name = argv[2];
  position.consumer_name = argv[3];
  for (;;) {
    auto result = source.ReadSince(position, 50, 1024);
    if (!result.ok()) {
      std::fprintf(stderr, "replay_reader: %s\n", result.status().ToString().c_str());
      return 1;
    }
  }
}
