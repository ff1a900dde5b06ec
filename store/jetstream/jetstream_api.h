// JetStreamApi: the few JetStream requests the JetStream store makes, as plain request/reply
// calls on one NATS connection (docs/jetstream-store.md). Publishes carry a message id
// (Nats-Msg-Id), so a publish repeated after a lost reply is answered by the server's duplicate
// window instead of being stored twice, and optionally an expected last subject sequence
// (compare-and-set). Reads go to the stream leader ($JS.API.STREAM.MSG.GET), never to a
// replica, so a read sees every acknowledged write.
//
// Every call is tried again while the cluster cannot answer (no responders while a leader is
// elected, a timeout, the connection reconnecting), with backoff, until `retry_ms` has passed;
// then kUnavailable. Thread-safe: calls may run concurrently (nats.c serialises the socket).
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/env.h"
#include "common/status.h"
#include "nats/nats_handles.h"
#include "nats/nats_options.h"
#include "store/jetstream/jetstream_record.h"

namespace agentckpt {

// A stored JetStream message.
struct JsMessage {
  uint64_t seq = 0;
  std::string subject;
  std::string data;
  std::map<std::string, std::string> headers;  // first value of each header
  // The header's value, "" when absent.
  std::string Header(const std::string& key) const;
};

struct JsStreamSpec {
  std::string name;
  std::vector<std::string> subjects;
  int replicas = 1;
  int64_t max_msgs_per_subject = -1;  // -1: unlimited
  int64_t max_msg_size = -1;
};

struct JetStreamApiOptions {
  std::string servers;  // "nats://h1:4222,nats://h2:4222"
  NatsAuthOptions auth;
  int64_t request_timeout_ms = 5000;  // one request
  int64_t retry_ms = 20000;           // all attempts of one call
  Env* env = nullptr;                 // Env::Default() when null
};

class JetStreamApi {
 public:
  // Connects (nats.c reconnects on its own afterwards, to any server of the list). kUnavailable
  // when no server answers, kUnauthenticated, kInvalidArgument (a bad URL or credential file).
  static StatusOr<std::unique_ptr<JetStreamApi>> Connect(JetStreamApiOptions options);
  ~JetStreamApi();
  JetStreamApi(const JetStreamApi&) = delete;
  JetStreamApi& operator=(const JetStreamApi&) = delete;

  // Publishes `data` to `subject` with `headers` and the message id `msg_id` (required: it is
  // what makes a retry safe). With `expect_last_subject_seq` the server stores it only if the
  // subject's last message has that stream sequence (0: the subject has no message). Returns
  // the stream sequence. kAlreadyExists when the expectation failed (another writer got there),
  // kResourceExhausted when the stream refuses the size, kUnavailable when the cluster could not
  // answer within retry_ms or answered that the stream is not found (see GetLast).
  StatusOr<uint64_t> Publish(const std::string& subject, std::string_view data,
                             const std::map<std::string, std::string>& headers,
                             const std::string& msg_id,
                             std::optional<uint64_t> expect_last_subject_seq);

  // The last message of `subject` in `stream`; nullopt when the subject has none. kUnavailable
  // when the cluster cannot answer, and when it answers that the stream is not found: the store
  // checked every stream when it opened, so that answer means the stream was deleted since (an
  // operator's act that `agentckpt setup-store` repairs) and is never "nothing stored" (which
  // would make a restore start cold and hide the agent's checkpoints).
  StatusOr<std::optional<JsMessage>> GetLast(const std::string& stream, const std::string& subject);
  // The first message of `subject` at or after stream sequence `from`; nullopt when none.
  StatusOr<std::optional<JsMessage>> GetNext(const std::string& stream, uint64_t from,
                                             const std::string& subject);
  // Removes the message at stream sequence `seq` (no_erase: the server does not overwrite its
  // bytes). OK when it was already gone. kUnavailable. The store never uses stream purges:
  // nats-server 2.9.10 replays a purge from its Raft log on start as "remove every message below
  // the purge's last sequence", whatever the purge's subject filter, while a replayed delete
  // removes its one message (docs/jetstream-store.md, "Removing messages").
  Status DeleteMessage(const std::string& stream, uint64_t seq);
  // The subjects of `stream` matching `filter` that hold messages (sorted). kUnavailable.
  StatusOr<std::vector<std::string>> Subjects(const std::string& stream, const std::string& filter);

  // Creates the stream (file storage, limits retention, discard old, duplicate window 2 min)
  // when `create` and it does not exist; checks that an existing one captures spec.subjects.
  // kNotFound "stream S does not exist (agentckpt setup-store creates it)" when it is missing
  // and !create; kFailedPrecondition when it exists with other subjects or limits.
  Status EnsureStream(const JsStreamSpec& spec, bool create);
  // Deletes the stream (tests and `setup-store --delete`). OK when it did not exist.
  Status DeleteStream(const std::string& name);
  // The stream's replica count, the name of its leader ("" while none) and its size.
  // kNotFound.
  struct StreamState {
    int replicas = 1;
    std::string leader;
    uint64_t messages = 0;
    uint64_t bytes = 0;  // stored bytes on one replica (subjects, headers and data)
  };
  StatusOr<StreamState> StreamPlacement(const std::string& name);

  // Requests sent so far, retries included (benchmarks count them per operation).
  uint64_t requests_sent() const { return requests_.load(); }
  Env* env() const { return env_; }

 private:
  JetStreamApi(JetStreamApiOptions options, nats_handles::ConnectionPtr nc);
  // One request/reply with retries (see the class comment); the parsed JSON reply as text.
  // `retry_on_timeout` false for requests that must not be repeated blindly.
  StatusOr<std::string> Request(const std::string& subject, std::string_view payload,
                                const std::map<std::string, std::string>* headers);
  StatusOr<std::optional<JsMessage>> MsgGet(const std::string& stream, const std::string& body);

  JetStreamApiOptions options_;
  Env* env_;
  nats_handles::ConnectionPtr nc_;
  std::atomic<uint64_t> requests_{0};
};

}  // namespace agentckpt
