#include "replay/js_api_inbox.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace agentckpt {

using nats_handles::MsgPtr;

StatusOr<std::unique_ptr<JsApiInbox>> JsApiInbox::Open(natsConnection* connection) {
  natsInbox* inbox = nullptr;
  natsStatus s = natsInbox_Create(&inbox);
  if (s != NATS_OK) {
    return UnavailableError(std::string("replay: inbox: ") + natsStatus_GetText(s));
  }
  const std::string name(inbox);
  natsInbox_Destroy(inbox);
  const size_t dot = name.rfind('.');
  std::string unique = dot == std::string::npos ? name : name.substr(dot + 1);
  natsSubscription* sub = nullptr;
  s = natsConnection_SubscribeSync(&sub, connection, (name + ".*").c_str());
  if (s != NATS_OK) {
    return UnavailableError(std::string("replay: subscribe to the inbox: ") +
                            natsStatus_GetText(s));
  }
  return std::unique_ptr<JsApiInbox>(
      new JsApiInbox(connection, name + ".", std::move(unique), sub));
}

JsApiInbox::JsApiInbox(natsConnection* connection, std::string prefix, std::string unique,
                       natsSubscription* sub)
    : connection_(connection), prefix_(std::move(prefix)), unique_(std::move(unique)), sub_(sub) {}

// The connection stays open after a replay and late replies may still reach the inbox.
JsApiInbox::~JsApiInbox() { nats_handles::UnsubscribeAndDestroy(connection_, sub_.release()); }

StatusOr<int> JsApiInbox::Send(const std::string& subject, const std::string& body) {
  const int tag = next_tag_++;
  const std::string reply = prefix_ + std::to_string(tag);
  natsStatus s = natsConnection_PublishRequest(connection_, subject.c_str(), reply.c_str(),
                                               body.data(), static_cast<int>(body.size()));
  if (s != NATS_OK) {
    return UnavailableError("replay: request on " + subject + ": " + natsStatus_GetText(s));
  }
  return tag;
}

MsgPtr JsApiInbox::Next(int64_t wait_ms) {
  natsMsg* msg = nullptr;
  if (wait_ms <= 0) return nullptr;
  const natsStatus s = natsSubscription_NextMsg(&msg, sub_.get(), wait_ms);
  if (s == NATS_NO_RESPONDERS) ++no_responders_;  // nats.c has dropped the reply
  if (s != NATS_OK) return nullptr;
  return MsgPtr(msg);
}

Status JsApiInbox::MissingReply(const std::string& what) const {
  if (no_responders_ > 0) {
    return UnavailableError("replay: " + what + ": no responders (is JetStream enabled?)");
  }
  return DeadlineExceededError("replay: " + what + ": no answer in time");
}

Status JsApiInbox::Flush(int64_t wait_ms) {
  const natsStatus s = natsConnection_FlushTimeout(connection_, std::max<int64_t>(1, wait_ms));
  if (s == NATS_TIMEOUT) return DeadlineExceededError("replay: flush: no answer in time");
  if (s != NATS_OK) return UnavailableError(std::string("replay: flush: ") + natsStatus_GetText(s));
  return OkStatus();
}

std::map<int, MsgPtr> JsApiInbox::Collect(const std::vector<int>& tags, int64_t wait_ms) {
  std::map<int, MsgPtr> replies;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  if (wait_ms <= 0 || tags.empty()) return replies;
  // A failed flush shows as missing replies.
  static_cast<void>(Flush(wait_ms));
  size_t wanted = 0;
  for (int tag : tags) wanted += tag >= 0 ? 1 : 0;
  const int no_responders_before = no_responders_;
  while (replies.size() + static_cast<size_t>(no_responders_ - no_responders_before) < wanted) {
    const int64_t left =
        std::chrono::ceil<std::chrono::milliseconds>(end - std::chrono::steady_clock::now())
            .count();
    const int no_responders = no_responders_;
    MsgPtr msg = Next(left);
    if (msg == nullptr && no_responders_ > no_responders) continue;  // one request is answered
    if (msg == nullptr) break;
    const int tag = TagOf(msg.get());
    if (tag >= 0 && std::find(tags.begin(), tags.end(), tag) != tags.end()) {
      replies[tag] = std::move(msg);
    }
  }
  return replies;
}

int JsApiInbox::TagOf(natsMsg* msg) const {
  const char* subject = natsMsg_GetSubject(msg);
  if (subject == nullptr) return -1;
  const std::string_view s(subject);
  if (s.size() <= prefix_.size() || s.compare(0, prefix_.size(), prefix_) != 0) return -1;
  int tag = 0;
  for (char c : s.substr(prefix_.size())) {
    if (c < '0' || c > '9' || tag > 100000000) return -1;
    tag = tag * 10 + (c - '0');
  }
  return tag;
}

}  // namespace agentckpt
