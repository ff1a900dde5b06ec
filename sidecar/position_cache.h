// PositionCache: the agent's JetStream consumer position (ack floor, pending count) for each
// checkpoint without a NATS round trip on the checkpoint's path. A checkpoint takes the position
// read at most `max_age_ms` before it, and asks for a fresh read in the background for the next
// one; with none that fresh (the first checkpoint, or after a quiet spell) it reads now, as
// before. A position read earlier than the checkpoint is safe: its ack floor can only be lower
// than the true one, and the restore classifies replayed messages by the consumer's live ack
// floor, so a message acknowledged in between is replayed as handled, never lost.
#pragma once

#include <cstdint>
#include <memory>

#include "common/env.h"
#include "common/status.h"
#include "context/checkpoint_writer.h"

namespace agentckpt {

struct PositionCacheOptions {
  int64_t max_age_ms = 250;  // a cached position older than this is not used
  // A cached position at least this old asks for a fresh read in the background; a younger one
  // does not, so a burst of checkpoints makes one consumer info request per this period instead
  // of one per checkpoint (each would compete with the checkpoint's own store write).
  int64_t refresh_after_ms = 100;
};

class PositionCache {
 public:
  // `read` does the real read (a consumer info request); `env` is borrowed (its monotonic clock
  // dates each read from the moment it started).
  PositionCache(Env* env, PositionReader read, PositionCacheOptions options);
  // Stops the background reader (a read in progress finishes on its own).
  ~PositionCache();

  // The position, read at most max_age_ms ago; when it is refresh_after_ms old or more, starts a
  // background read for the next call. With no position that fresh, reads now (and keeps the
  // result). Errors as `read`. Thread-safe.
  StatusOr<NatsPosition> Get();

  struct State;  // the cached position and the background reader's flags

 private:
  Env* env_;
  PositionCacheOptions options_;
  std::shared_ptr<State> state_;
};

}  // namespace agentckpt
