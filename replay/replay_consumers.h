// ReplayConsumers: the short-lived ephemeral pull consumers of one replay (docs/replay.md).
// Each reads the stream from a start sequence through the durable's filter subject (ack policy
// none, memory storage, one replica, a 10 s inactivity threshold, so the server removes it even
// if this process dies mid-read); the server's count of its pending messages when it is created
// is the number of matching messages from its start to the end of the stream. Creations are sent
// together and their replies awaited together (one round trip for all); every consumer is
// deleted on destruction, the deletes sent together and their replies awaited (at most 1 s each
// way), so none outlives the replay.
//
// Not thread-safe: one object belongs to one replay.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "replay/js_api_inbox.h"

namespace agentckpt {

class ReplayConsumers {
 public:
  // `inbox` is borrowed and outlives this object.
  ReplayConsumers(JsApiInbox* inbox, std::string stream, std::string filter_subject);
  // Deletes every consumer created (see the file comment).
  ~ReplayConsumers();
  ReplayConsumers(const ReplayConsumers&) = delete;
  ReplayConsumers& operator=(const ReplayConsumers&) = delete;

  // Sends the creation of a consumer starting at `start_sequence` without waiting; returns its
  // index. kDeadlineExceeded when `remaining_ms` is 0 (then nothing is sent: a request that
  // creates something must not outlive the call), kUnavailable when the publish fails.
  StatusOr<size_t> Create(uint64_t start_sequence, int64_t remaining_ms);

  // Waits at most `wait_ms` for the replies to every creation sent and not yet answered.
  // kDeadlineExceeded (a reply did not come in time), kFailedPrecondition (the server refused a
  // consumer, e.g. on a work-queue stream), kNotFound (the stream is gone), kUnavailable,
  // kInternal (a reply that does not parse): the first failure; the others are recorded too.
  Status Await(int64_t wait_ms);

  // Of a consumer whose creation was answered: its server-side name and its count.
  const std::string& name(size_t i) const { return readers_[i].name; }
  uint64_t start(size_t i) const { return readers_[i].start; }
  uint64_t count(size_t i) const { return readers_[i].count; }
  bool created(size_t i) const { return readers_[i].created; }
  size_t size() const { return readers_.size(); }

 private:
  struct Reader {
    std::string name;
    uint64_t start = 0;
    int tag = -1;           // the creation request's reply tag
    bool answered = false;  // its reply came (created or refused)
    bool created = false;
    uint64_t count = 0;
  };
  void DeleteAll();

  JsApiInbox* inbox_;
  std::string stream_;
  std::string filter_;
  std::vector<Reader> readers_;
};

}  // namespace agentckpt
