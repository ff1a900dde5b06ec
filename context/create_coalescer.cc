#include "context/create_coalescer.h"

#include <algorithm>
#include <utility>

namespace agentckpt {

using nlohmann::json;

namespace {

// Error replies have the shape of the HTTP API's error bodies; these concern no field.
json RateLimited(const std::string& why) {
  return {
      {"error", {{"code", "RATE_LIMITED"}, {"message", "rate_limited: " + why}, {"field", ""}}}};
}

json ShuttingDown() {
  return {{"error",
           {{"code", "UNAVAILABLE"}, {"message", "the sidecar is shutting down"}, {"field", ""}}}};
}

}  // namespace

TokenBucket::TokenBucket(Env* env, double rate_per_s, double burst)
    : env_(env),
      rate_per_us_(rate_per_s / 1e6),
      burst_(std::max(1.0, burst)),
      tokens_(std::max(1.0, burst)),
      last_us_(env->NowMonotonicMicros()) {}

bool TokenBucket::TryTake() {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t now = env_->NowMonotonicMicros();
  if (now > last_us_) {
    tokens_ = std::min(burst_, tokens_ + static_cast<double>(now - last_us_) * rate_per_us_);
    last_us_ = now;
  }
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

CreateCoalescer::CreateCoalescer(Env* env, WriteFn write, CoalescerOptions options)
    : write_(std::move(write)), options_(options), bucket_(env, options.rate_per_s, options.burst) {
  thread_ = std::thread([this] { Loop(); });
}

CreateCoalescer::~CreateCoalescer() { Stop(); }

void CreateCoalescer::Submit(const CreateRequest& request, ReplyFn reply) {
  std::string refused;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      refused = "stopping";
    } else if (pending_.size() + in_flight_ >= options_.max_waiters) {
      refused =
          "more than " + std::to_string(options_.max_waiters) + " checkpoint requests are waiting";
    } else if (!bucket_.TryTake()) {
      refused = "more than " + std::to_string(options_.rate_per_s) +
                " checkpoint requests per second (burst " + std::to_string(options_.burst) +
                "; CKPT_CREATE_RATE_PER_S, CKPT_CREATE_BURST)";
    } else {
      pending_.push_back(Waiter{request, std::move(reply)});
      cv_.notify_all();
      return;
    }
    ++rate_limited_;
  }
  if (refused == "stopping") {
    reply(ShuttingDown());
  } else {
    reply(RateLimited(refused));
  }
}

void CreateCoalescer::Loop() {
  while (true) {
    std::vector<Waiter> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (stopping_) return;
      batch.swap(pending_);
      in_flight_ = batch.size();
    }
    TriggerReason trigger = TriggerReason::kManual;
    std::string task_id;
    for (const Waiter& w : batch) {
      if (w.request.trigger == TriggerReason::kPreCompaction) trigger = w.request.trigger;
      if (task_id.empty()) task_id = w.request.task_id;
    }
    json body = write_(trigger, task_id);
    if (!body.contains("error")) body["coalescedRequests"] = batch.size();
    for (Waiter& w : batch) w.reply(body);
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_ = 0;
    ++writes_;
  }
}

void CreateCoalescer::Stop() {
  std::vector<Waiter> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    left.swap(pending_);
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  json body = ShuttingDown();
  for (Waiter& w : left) w.reply(body);
}

uint64_t CreateCoalescer::writes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return writes_;
}

uint64_t CreateCoalescer::rate_limited() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rate_limited_;
}

}  // namespace agentckpt
