#include "replay/replay_consumers.h"

#include <nats/nats.h>

#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/json_member.h"
#include "replay/jetstream_info.h"

namespace agentckpt {
namespace {

using nlohmann::json;

constexpr int64_t kEphemeralInactiveNanos = int64_t{10} * 1000 * 1000 * 1000;
constexpr int64_t kCleanupWaitMillis = 1000;
constexpr const char* kEphemeralDescription = "agentckpt dry-run replay (read only)";

// The server's ways of saying a work-queue stream cannot have this reader beside the durable.
bool IsWorkQueueRefusal(int code) {
  return code == JSConsumerPullRequiresAckErr || code == JSConsumerWQRequiresExplicitAckErr ||
         code == JSConsumerWQMultipleUnfilteredErr || code == JSConsumerWQConsumerNotUniqueErr ||
         code == JSConsumerWQConsumerNotDeliverAllErr;
}

}  // namespace

ReplayConsumers::ReplayConsumers(JsApiInbox* inbox, std::string stream, std::string filter_subject)
    : inbox_(inbox), stream_(std::move(stream)), filter_(std::move(filter_subject)) {}

ReplayConsumers::~ReplayConsumers() { DeleteAll(); }

StatusOr<size_t> ReplayConsumers::Create(uint64_t start_sequence, int64_t remaining_ms) {
  if (remaining_ms <= 0) return DeadlineExceededError("replay: read deadline exceeded");
  Reader reader;
  // Named here, so that it can be deleted even if its creation's reply never comes.
  reader.name = "agentckpt_replay_" + inbox_->unique() + "_" + std::to_string(readers_.size());
  reader.start = start_sequence;
  json config = {{"name", reader.name},
                 {"description", kEphemeralDescription},
                 {"deliver_policy", "by_start_sequence"},
                 {"opt_start_seq", start_sequence},
                 {"ack_policy", "none"},
                 {"inactive_threshold", kEphemeralInactiveNanos},
                 {"mem_storage", true},
                 {"num_replicas", 1}};
  if (!filter_.empty()) config["filter_subject"] = filter_;
  const json request = {{"stream_name", stream_}, {"config", std::move(config)}};
  StatusOr<int> tag =
      inbox_->Send("$JS.API.CONSUMER.CREATE." + stream_ + "." + reader.name, request.dump());
  if (!tag.ok()) return tag.status();
  reader.tag = *tag;
  readers_.push_back(std::move(reader));
  return readers_.size() - 1;
}

Status ReplayConsumers::Await(int64_t wait_ms) {
  std::vector<int> tags;
  for (const Reader& r : readers_) {
    if (!r.answered) tags.push_back(r.tag);
  }
  if (tags.empty()) return OkStatus();
  std::map<int, nats_handles::MsgPtr> replies = inbox_->Collect(tags, wait_ms);
  Status first = OkStatus();
  for (Reader& r : readers_) {
    if (r.answered) continue;
    auto it = replies.find(r.tag);
    if (it == replies.end()) {
      if (first.ok()) first = inbox_->MissingReply("create the replay consumer");
      continue;
    }
    r.answered = true;
    int code = 0;
    StatusOr<json> info = ApiReplyJson(it->second.get(), "create the replay consumer", &code);
    if (!info.ok()) {
      Status s = info.status();
      if (IsWorkQueueRefusal(code)) {
        s = FailedPreconditionError(
            "replay: a work-queue stream allows no second consumer beside the agent's: " +
            s.message());
      }
      if (first.ok()) first = s;
      continue;
    }
    r.created = true;
    r.count = JsonMemberOr(*info, "num_pending", uint64_t{0}) +
              JsonMemberOr(JsonObjectMember(*info, "delivered"), "consumer_seq", uint64_t{0});
  }
  return first;
}

void ReplayConsumers::DeleteAll() {
  // A creation still unanswered (past the deadline) may yet happen: wait for it a little, so
  // that its delete cannot overtake it. Best effort throughout: a consumer left behind is removed
  // by the server after its inactivity threshold.
  static_cast<void>(Await(kCleanupWaitMillis));
  std::vector<int> tags;
  for (const Reader& r : readers_) {
    if (r.answered && !r.created) continue;  // refused: nothing to delete
    StatusOr<int> tag =
        inbox_->Send("$JS.API.CONSUMER.DELETE." + stream_ + "." + r.name, std::string());
    if (tag.ok()) tags.push_back(*tag);
  }
  inbox_->Collect(tags, kCleanupWaitMillis);
}

}  // namespace agentckpt
