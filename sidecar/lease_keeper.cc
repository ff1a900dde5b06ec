#include "sidecar/lease_keeper.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/time_format.h"
#include "observability/json_log.h"

namespace agentckpt {

std::string MakeLeaseHolderId() {
  std::string host;
  if (const char* pod = std::getenv("POD_NAME"); pod != nullptr && *pod != '\0') {
    host = pod;
  } else {
    char name[256] = {0};
    host = gethostname(name, sizeof(name) - 1) == 0 && name[0] != '\0' ? name : "host";
  }
  return host + "/" + std::to_string(getpid());
}

bool IsDeadLocalHolder(const std::string& holder, const std::string& own_holder) {
  const size_t slash = holder.rfind('/');
  const size_t own_slash = own_holder.rfind('/');
  if (slash == std::string::npos || own_slash == std::string::npos) return false;
  if (holder.compare(0, slash, own_holder, 0, own_slash) != 0 || slash != own_slash) return false;
  const std::string digits = holder.substr(slash + 1);
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  const pid_t pid = static_cast<pid_t>(std::stol(digits));
  if (pid <= 0 || pid == getpid()) return false;
  return kill(pid, 0) != 0 && errno == ESRCH;
}

LeaseKeeper::LeaseKeeper(Env* env, CheckpointStore* store, LeaseKeeperOptions options)
    : env_(env), store_(store), options_(std::move(options)) {
  options_.retry_ms = std::max<int64_t>(10, std::min(options_.retry_ms, options_.ttl_ms / 3));
}

LeaseKeeper::~LeaseKeeper() { Stop(); }

StatusOr<Lease> LeaseKeeper::TryAcquire() {
  const int64_t sent_us = env_->NowMonotonicMicros();
  // A holder of this pod or host whose process is gone is taken over in the same lease change.
  auto got = store_->AcquireOrTakeOverLease(options_.agent_id, options_.holder, options_.ttl_ms,
                                            env_->NowUnixMillis(), options_.holder_is_dead);
  if (got.ok() && !got->taken_over_from.empty()) {
    LogInfo("took over the writer lease of a sidecar that no longer runs",
            {{"agentId", options_.agent_id},
             {"deadHolder", got->taken_over_from},
             {"epoch", got->epoch}});
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (got.ok()) {
    lease_ = *got;
    state_ = "held";
    detail_.clear();
    ConfirmedLocked(sent_us);
  } else {
    state_ = "standby";
    detail_ = got.status().message();
  }
  return got;
}

void LeaseKeeper::Start(std::function<Status(const Lease&)> on_acquired,
                        std::function<void(const Status&)> on_lost) {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this, a = std::move(on_acquired), l = std::move(on_lost)]() mutable {
    Loop(std::move(a), std::move(l));
  });
}

bool LeaseKeeper::WaitMs(int64_t ms) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
  return !stopping_;
}

void LeaseKeeper::Loop(std::function<Status(const Lease&)> on_acquired,
                       std::function<void(const Status&)> on_lost) {
  bool announced = false;
  int64_t renew_due_us = 0;  // when the held lease is next renewed (monotonic)
  while (true) {
    if (!held()) {
      auto got = TryAcquire();
      if (!got.ok()) {
        if (!WaitMs(options_.retry_ms)) return;
        continue;
      }
      announced = false;
      renew_due_us = 0;
    }
    if (renew_due_us == 0) renew_due_us = env_->NowMonotonicMicros() + options_.ttl_ms / 3 * 1000;
    if (!announced) {
      std::optional<Lease> lease;
      {
        std::lock_guard<std::mutex> lock(mu_);
        lease = lease_;
      }
      Status taken_up = on_acquired && lease ? on_acquired(*lease) : OkStatus();
      announced = taken_up.code() != StatusCode::kUnavailable;
      std::lock_guard<std::mutex> lock(mu_);
      detail_ = announced ? std::string() : taken_up.message();
    }
    // Renewals keep their pace while the holder retries taking up its work.
    const int64_t until_renewal_ms = (renew_due_us - env_->NowMonotonicMicros()) / 1000;
    if (until_renewal_ms > 0 &&
        !WaitMs(announced ? until_renewal_ms : std::min(options_.retry_ms, until_renewal_ms))) {
      return;
    }
    if (env_->NowMonotonicMicros() < renew_due_us) continue;  // another try of on_acquired
    renew_due_us = env_->NowMonotonicMicros() + options_.ttl_ms / 3 * 1000;
    LeaseToken token;
    {
      std::lock_guard<std::mutex> lock(mu_);
      token = LeaseToken{lease_->holder, lease_->epoch};
    }
    auto renewed = Renew(token);
    if (renewed.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (announced) detail_.clear();
      continue;
    }
    if (renewed.status().code() == StatusCode::kFailedPrecondition) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        state_ = "lost";
        detail_ = renewed.status().message();
      }
      LogError("writer lease lost", {{"agentId", options_.agent_id},
                                     {"holder", options_.holder},
                                     {"reason", renewed.status().message()}});
      if (on_lost) on_lost(renewed.status());
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      detail_ = "renewal failed: " + renewed.status().ToString();
    }
    LogWarn("writer lease renewal failed; retrying", {{"reason", renewed.status().ToString()}});
  }
}

void LeaseKeeper::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

Status LeaseKeeper::Release() {
  Stop();
  std::optional<Lease> lease;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != "held") return OkStatus();
    lease = lease_;
  }
  Status s = store_->ReleaseLease(options_.agent_id, LeaseToken{lease->holder, lease->epoch},
                                  env_->NowUnixMillis());
  if (s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = "released";
  }
  return s;
}

StatusOr<Lease> LeaseKeeper::Renew(const LeaseToken& token) {
  const int64_t sent_us = env_->NowMonotonicMicros();
  auto renewed =
      store_->RenewLease(options_.agent_id, token, options_.ttl_ms, env_->NowUnixMillis());
  if (renewed.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    lease_ = *renewed;
    ConfirmedLocked(sent_us);
  }
  return renewed;
}

void LeaseKeeper::ConfirmedLocked(int64_t sent_us) {
  // No other holder can take the lease before it expires, ttl after the request's time by the
  // holder's wall clock; a third of the ttl is left for clock skew between hosts.
  confirmed_until_us_ = std::max(confirmed_until_us_, sent_us + options_.ttl_ms * 2 / 3 * 1000);
}

Status LeaseKeeper::ConfirmHeld() {
  LeaseToken token;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != "held" || !lease_) {
      return FailedPreconditionError("lease lost: this sidecar's writer lease is " + state_ +
                                     (detail_.empty() ? "" : " (" + detail_ + ")"));
    }
    if (env_->NowMonotonicMicros() < confirmed_until_us_) return OkStatus();
    token = LeaseToken{lease_->holder, lease_->epoch};
  }
  // Past the window (a pause, or renewals failing): ask the store before answering.
  auto renewed = Renew(token);
  if (renewed.ok()) return OkStatus();
  if (renewed.status().code() == StatusCode::kFailedPrecondition) {
    LogError("writer lease lost (found before answering a journal append)",
             {{"agentId", options_.agent_id},
              {"holder", options_.holder},
              {"reason", renewed.status().message()}});
    return renewed.status();
  }
  return UnavailableError("cannot confirm the writer lease: " + renewed.status().ToString());
}

bool LeaseKeeper::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_ == "held";
}

nlohmann::json LeaseKeeper::Describe() const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json j = {{"state", state_}, {"holder", options_.holder}};
  if (lease_) {
    j["epoch"] = lease_->epoch;
    j["expiresAt"] = FormatRfc3339Millis(lease_->expires_at_ms);
  }
  if (!detail_.empty()) j["detail"] = detail_;
  return j;
}

}  // namespace agentckpt
