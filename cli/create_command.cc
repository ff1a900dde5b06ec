#include "cli/create_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "cli/terminal_output.h"
#include "common/ids.h"
#include "common/json_member.h"
#include "nats/subjects.h"
#include "sidecar/config.h"

namespace agentckpt {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Received {
  enum Kind { kReply, kCreated, kFailed } kind = kReply;
  bool no_responders = false;
  json body;  // discarded (is_discarded) when not JSON
};

// Messages from the three subscriptions, handed from nats.c's delivery threads to the waiter.
struct Inbox {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Received> queue;
  int closed = 0;  // subscriptions whose handler will not run again
};

struct Subscription {
  Inbox* inbox;
  Received::Kind kind;
};

void OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* sub = static_cast<Subscription*>(closure);
  Received r;
  r.kind = sub->kind;
  r.no_responders = natsMsg_IsNoResponders(msg);
  r.body = json::parse(natsMsg_GetData(msg), natsMsg_GetData(msg) + natsMsg_GetDataLength(msg),
                       nullptr, false);
  natsMsg_Destroy(msg);
  std::lock_guard<std::mutex> lock(sub->inbox->mu);
  sub->inbox->queue.push_back(std::move(r));
  sub->inbox->cv.notify_all();
}

void OnComplete(void* closure) {
  auto* inbox = static_cast<Inbox*>(closure);
  std::lock_guard<std::mutex> lock(inbox->mu);
  ++inbox->closed;
  inbox->cv.notify_all();
}

// The three subscriptions over one Inbox. The destructor unsubscribes and waits (bounded) until
// nats.c will not call the handlers again, so the Inbox may go away after it.
class Subscriptions {
 public:
  Subscriptions() = default;
  Subscriptions(const Subscriptions&) = delete;
  Subscriptions& operator=(const Subscriptions&) = delete;
  ~Subscriptions() {
    for (natsSubscription* s : subs_) natsSubscription_Unsubscribe(s);
    {
      std::unique_lock<std::mutex> lock(inbox_.mu);
      inbox_.cv.wait_for(lock, std::chrono::seconds(2),
                         [&] { return inbox_.closed >= static_cast<int>(subs_.size()); });
    }
    for (natsSubscription* s : subs_) natsSubscription_Destroy(s);
  }

  Status Add(natsConnection* nc, const std::string& subject, Received::Kind kind) {
    closures_.push_back(std::make_unique<Subscription>(Subscription{&inbox_, kind}));
    natsSubscription* s = nullptr;
    if (natsConnection_Subscribe(&s, nc, subject.c_str(), OnMessage, closures_.back().get()) !=
        NATS_OK) {
      return UnavailableError("cannot subscribe to " + subject);
    }
    subs_.push_back(s);
    if (natsSubscription_SetOnCompleteCB(s, OnComplete, &inbox_) != NATS_OK) {
      return InternalError("cannot watch the subscription to " + subject);
    }
    return OkStatus();
  }
  Inbox& inbox() { return inbox_; }

 private:
  Inbox inbox_;
  std::vector<std::unique_ptr<Subscription>> closures_;
  std::vector<natsSubscription*> subs_;
};

struct Outcome {
  enum Kind { kCreated, kFailed, kTimeout, kNoResponders } kind = kTimeout;
  json payload;             // the reply or the event
  bool from_reply = false;  // false: matched by an event only
  bool event_seen = false;  // the checkpoint.created / .failed event was seen too
};

std::string Text(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// Sends the request and waits as described in create_command.h.
StatusOr<Outcome> RequestCheckpoint(natsConnection* nc, const std::string& agent,
                                    const json& request, double timeout_s, Progress* progress) {
  const std::string trigger = request["trigger"].get<std::string>();
  natsInbox* reply_subject = nullptr;
  if (natsInbox_Create(&reply_subject) != NATS_OK) return InternalError("natsInbox_Create failed");
  std::unique_ptr<natsInbox, void (*)(natsInbox*)> reply_owner(reply_subject, natsInbox_Destroy);
  Subscriptions subs;
  Status subscribed = subs.Add(nc, reply_subject, Received::kReply);
  if (subscribed.ok())
    subscribed = subs.Add(nc, subjects::CheckpointCreated(agent), Received::kCreated);
  if (subscribed.ok())
    subscribed = subs.Add(nc, subjects::CheckpointFailed(agent), Received::kFailed);
  if (!subscribed.ok()) return subscribed;
  Inbox& inbox = subs.inbox();
  // The server knows the subscriptions before the request goes out.
  if (natsConnection_FlushTimeout(nc, 5000) != NATS_OK) {
    return UnavailableError("NATS did not confirm the subscriptions");
  }
  const std::string body = request.dump();
  if (natsConnection_PublishRequestString(nc, subjects::CheckpointCreate(agent).c_str(),
                                          reply_subject, body.c_str()) != NATS_OK ||
      natsConnection_FlushTimeout(nc, 5000) != NATS_OK) {
    return UnavailableError("cannot publish on " + subjects::CheckpointCreate(agent));
  }

  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      start + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  std::optional<Outcome> answered;  // from the reply, waiting for its created event
  Clock::time_point confirm_until{};
  std::optional<Outcome> by_event;  // an event of our trigger, waiting for a reply
  Clock::time_point event_grace_until{};
  std::set<std::string> created_ids;
  std::unique_lock<std::mutex> lock(inbox.mu);
  while (true) {
    while (!inbox.queue.empty()) {
      Received r = std::move(inbox.queue.front());
      inbox.queue.pop_front();
      const Clock::time_point now = Clock::now();
      if (r.kind == Received::kReply && !answered) {
        if (r.no_responders) return Outcome{Outcome::kNoResponders, json(), true, false};
        Outcome o;
        o.from_reply = true;
        o.payload = r.body;
        const bool error = !r.body.is_object() || r.body.contains("error");
        o.kind = error ? Outcome::kFailed : Outcome::kCreated;
        if (error) return o;
        o.event_seen = created_ids.count(Text(r.body, "checkpointId")) > 0;
        if (o.event_seen) return o;
        answered = o;
        confirm_until = std::min(deadline, now + std::chrono::seconds(2));
      } else if (r.kind == Received::kCreated) {
        const std::string id = Text(r.body, "checkpointId");
        created_ids.insert(id);
        if (answered && Text(answered->payload, "checkpointId") == id) {
          answered->event_seen = true;
          return *answered;
        }
        if (!answered && !by_event && Text(r.body, "trigger") == trigger) {
          by_event = Outcome{Outcome::kCreated, r.body, false, true};
          event_grace_until = std::min(deadline, now + std::chrono::seconds(1));
        }
      } else if (r.kind == Received::kFailed && !answered && !by_event &&
                 Text(r.body, "operation") == "checkpoint" && Text(r.body, "trigger") == trigger &&
                 !r.body.contains("field")) {  // with field: another client's rejected request
        by_event = Outcome{Outcome::kFailed, r.body, false, true};
        event_grace_until = std::min(deadline, now + std::chrono::seconds(1));
      }
    }
    const Clock::time_point now = Clock::now();
    if (answered && now >= confirm_until) return *answered;
    if (by_event && now >= event_grace_until) return *by_event;
    if (now >= deadline) return Outcome{};
    const double waited = std::chrono::duration<double>(now - start).count();
    lock.unlock();
    char text[160];
    std::snprintf(text, sizeof(text), "waiting for the sidecar of %s: %.0fs of %.0fs",
                  agent.c_str(), waited, timeout_s);
    progress->Update(text);
    lock.lock();
    inbox.cv.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(200)),
                        [&] { return !inbox.queue.empty(); });
  }
}

std::string FailureReason(const Outcome& o) {
  const json& p = o.payload;
  if (!p.is_object()) return "the sidecar answered with something that is not JSON";
  if (p.contains("error") && p["error"].is_object()) {
    return Text(p["error"], "code") + ": " + Text(p["error"], "message");
  }
  return Text(p, "reason");
}

}  // namespace

CreateCommand::CreateCommand(CLI::App* app) {
  const char* agent = std::getenv("AGENT_ID");
  if (agent != nullptr) agent_ = agent;
  command_ = app->add_subcommand(
      "create", "Ask the agent's sidecar for a checkpoint over NATS and wait for the outcome");
  CLI::App* c = command_;
  c->add_option("--agent", agent_, "Agent id (default: $AGENT_ID)");
  c->add_option("--trigger", trigger_, "Trigger reason recorded in the checkpoint")
      ->check(CLI::IsMember({"manual", "pre_compaction"}))
      ->capture_default_str();
  c->add_option("--task-id", task_id_, "Task id sent with the request (logged by the sidecar)");
  AddNatsClientFlags(c, &nats_);
  c->add_option("--timeout", timeout_s_, "Seconds to wait for the outcome")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  c->add_flag("--json", json_, "Machine-readable JSON on stdout");
}

bool CreateCommand::Selected() const { return command_->parsed(); }

int CreateCommand::Execute() {
  if (agent_.empty()) {
    return ReportError("create", InvalidArgumentError("--agent (or $AGENT_ID) is required"));
  }
  if (Status bad = CheckAgentIdSetting(agent_); !bad.ok()) {
    return ReportSettingError("create", bad);
  }
  Status s = CheckNatsClientOptions(nats_);
  if (!s.ok()) return ReportError("create", s);
  nats_.timeout_ms = std::min(nats_.timeout_ms, static_cast<int>(timeout_s_ * 1000) + 1);
  auto nc = ConnectNats(nats_, "agentckpt create");
  if (!nc.ok()) return ReportError("create", nc.status());
  json request = {{"trigger", trigger_}};
  if (!task_id_.empty()) request["taskId"] = task_id_;
  Progress progress;
  auto outcome = RequestCheckpoint(nc->get(), agent_, request, timeout_s_, &progress);
  progress.Done();
  if (!outcome.ok()) return ReportError("create", outcome.status());
  const Outcome& o = *outcome;
  json out = {{"agentId", agent_}, {"trigger", trigger_}};
  int code = 0;
  switch (o.kind) {
    case Outcome::kCreated:
      out.update(o.payload);
      out["result"] = "created";
      break;
    case Outcome::kFailed:
      out["result"] = "failed";
      out["reason"] = FailureReason(o);
      code = 1;
      break;
    case Outcome::kTimeout:
      out["result"] = "timeout";
      out["reason"] = "no outcome from the sidecar of " + agent_ + " within " +
                      std::to_string(static_cast<int>(timeout_s_ + 0.5)) + "s";
      code = 3;
      break;
    case Outcome::kNoResponders:
      out["result"] = "timeout";
      out["reason"] = "no sidecar listens on " + subjects::CheckpointCreate(agent_);
      code = 3;
      break;
  }
  out["answered"] = o.from_reply;
  out["eventSeen"] = o.event_seen;
  if (json_) {
    std::printf("%s\n", out.dump(2).c_str());
  } else if (code == 0) {
    Table t({"created", Text(out, "checkpointId")});
    t.AddRow({"sequence", std::to_string(JsonMemberOr(out, "sequenceNumber", int64_t{0}))});
    t.AddRow({"size", HumanSize(JsonMemberOr(out, "sizeBytes", int64_t{0}))});
    t.AddRow({"duration", HumanMillis(JsonMemberOr(out, "durationMs", 0.0))});
    t.AddRow({"trigger", Text(out, "trigger")});
    t.Print(stdout);
  }
  if (code != 0) {
    std::fprintf(stderr, "agentckpt create: %s: %s\n", Text(out, "result").c_str(),
                 Text(out, "reason").c_str());
  }
  return code;
}

}  // namespace agentckpt
