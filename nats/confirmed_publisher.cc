#include "nats/confirmed_publisher.h"

#include <chrono>
#include <utility>
#include <vector>

#include "observability/json_log.h"

namespace agentckpt {

ConfirmedPublisher::ConfirmedPublisher(NatsLink* link, ConfirmedPublisherOptions options)
    : link_(link), options_(options), thread_([this] { Loop(); }) {}

ConfirmedPublisher::~ConfirmedPublisher() { Stop(); }

Status ConfirmedPublisher::Publish(const std::string& event, const std::string& subject,
                                   const std::string& data) {
  // Read before the write: if the link moves to a new connection in between, the event is
  // labelled with the old one and published again there (a duplicate, never a loss).
  std::string connection = link_->ConnectionId();
  Status s = link_->Publish(event, subject, data);
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return OkStatus();
    pending_.push_back(Pending{next_id_++, event, subject, data, std::move(connection)});
    if (pending_.size() > options_.max_unconfirmed) {
      LogWarn("event not confirmed",
              {{"event", pending_.front().event},
               {"reason", "more than " + std::to_string(options_.max_unconfirmed) +
                              " events wait for the NATS server's confirmation"}});
      pending_.pop_front();
    }
  }
  cv_.notify_all();
  return OkStatus();
}

bool ConfirmedPublisher::WaitConfirmed(int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return done_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                           [this] { return pending_.empty(); });
}

void ConfirmedPublisher::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
    if (stopping_) break;
    // Events written on another connection than the current one may have died with it: again.
    const std::string current = link_->ConnectionId();
    std::vector<Pending> copies;
    for (const Pending& p : pending_) {
      if (p.connection != current) copies.push_back(p);
    }
    const uint64_t last = pending_.back().id;
    lock.unlock();
    std::vector<uint64_t> republished;
    if (!current.empty()) {
      for (const Pending& p : copies) {
        if (link_->Publish(p.event, p.subject, p.data).ok()) republished.push_back(p.id);
      }
    }
    std::string after;
    const Status flushed = link_->FlushWithoutBlockingPublishes(options_.flush_timeout_ms, &after);
    lock.lock();
    for (Pending& p : pending_) {
      for (uint64_t id : republished) {
        if (p.id == id) p.connection = current;
      }
    }
    if (flushed.ok() && !current.empty() && after == current) {
      // Everything up to `last` was written on `current` (or before it, on the same one) and the
      // server has answered a PING sent after it: it has them.
      while (!pending_.empty() && pending_.front().id <= last &&
             pending_.front().connection == current) {
        pending_.pop_front();
      }
      if (pending_.empty()) done_cv_.notify_all();
      continue;
    }
    cv_.wait_for(lock, std::chrono::milliseconds(options_.retry_ms), [this] { return stopping_; });
  }
  for (const Pending& p : pending_) {
    LogWarn("event not confirmed", {{"event", p.event}, {"reason", "the publisher stopped"}});
  }
  pending_.clear();
  done_cv_.notify_all();
}

void ConfirmedPublisher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

}  // namespace agentckpt
