#include "bench/chaos/node_chaos.h"

#include <nats/nats.h>

#include <algorithm>

#include "examples/reference_agent/probe_log.h"
#include "nats/nats_handles.h"
#include "tests/support/nats_cluster.h"

namespace chaos {

using agentckpt::Status;
using agentckpt::testing::NatsClusterProcess;
using reference_agent::WallMillis;

namespace {

constexpr int kStreamHealthyTimeoutMs = 60000;
constexpr int kRequestTimeoutMs = 2000;

int64_t RemainingMs(std::chrono::steady_clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                               std::chrono::steady_clock::now())
      .count();
}

// Waits until the durable consumer has a leader and a current, online replica besides it.
Status WaitConsumerHealthy(const std::string& url_list, const std::string& stream,
                           const std::string& consumer, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string last = "no answer yet";
  while (RemainingMs(deadline) > 0) {
    auto opts = agentckpt::testing::NewClusterNatsOptions(url_list);
    if (!opts.ok()) return opts.status();
    natsOptions_SetTimeout(opts->get(), kRequestTimeoutMs);
    natsOptions_SetAllowReconnect(opts->get(), false);
    natsConnection* raw = nullptr;
    natsStatus s = natsConnection_Connect(&raw, opts->get());
    agentckpt::nats_handles::ConnectionPtr nc(raw);
    jsCtx* js_raw = nullptr;
    if (s == NATS_OK) s = natsConnection_JetStream(&js_raw, nc.get(), nullptr);
    agentckpt::nats_handles::JsCtxPtr js(js_raw);
    while (s == NATS_OK && RemainingMs(deadline) > 0) {
      jsOptions o;
      jsOptions_Init(&o);
      o.Wait = std::clamp<int64_t>(RemainingMs(deadline), 1, 1000);
      jsConsumerInfo* ci = nullptr;
      jsErrCode jerr = static_cast<jsErrCode>(0);
      s = js_GetConsumerInfo(&ci, js.get(), stream.c_str(), consumer.c_str(), &o, &jerr);
      if (s == NATS_OK && ci != nullptr) {
        const jsClusterInfo* c = ci->Cluster;
        int current = 0;
        bool leader = c != nullptr && c->Leader != nullptr && *c->Leader != '\0';
        for (int r = 0; c != nullptr && r < c->ReplicasLen; ++r) {
          if (c->Replicas[r]->Current && !c->Replicas[r]->Offline) ++current;
        }
        jsConsumerInfo_Destroy(ci);
        if (leader && current >= 1) return agentckpt::OkStatus();
        last = leader ? "no current replica besides the leader" : "no leader";
      } else {
        last = std::string("consumer info: ") + natsStatus_GetText(s);
        s = NATS_OK;  // ask again (a request refused or timed out during an election)
      }
      if (natsConnection_Status(nc.get()) != NATS_CONN_STATUS_CONNECTED) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (s != NATS_OK) last = std::string("connect: ") + natsStatus_GetText(s);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return agentckpt::DeadlineExceededError("consumer " + stream + "/" + consumer +
                                          " not healthy after " + std::to_string(timeout_ms) +
                                          " ms; last: " + last);
}

}  // namespace

NodeChaos::NodeChaos(std::string leader_stream, std::vector<std::string> streams,
                     std::string consumer_stream, std::string consumer)
    : leader_stream_(std::move(leader_stream)),
      streams_(std::move(streams)),
      consumer_stream_(std::move(consumer_stream)),
      consumer_(std::move(consumer)) {}

NodeChaos::~NodeChaos() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NodeChaos::Start() {
  thread_ = std::thread([this] { Loop(); });
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return state_ != State::kStarting; });
}

int NodeChaos::size() const { return NatsClusterProcess::kSize; }

std::string NodeChaos::url() const {
  std::lock_guard<std::mutex> lock(mu_);
  return url_list_;
}

std::string NodeChaos::url(int i) const {
  std::lock_guard<std::mutex> lock(mu_);
  return urls_.at(static_cast<size_t>(i));
}

bool NodeChaos::up(int i) const {
  std::lock_guard<std::mutex> lock(mu_);
  return up_.at(static_cast<size_t>(i));
}

std::string NodeChaos::log_path(int i) const {
  std::lock_guard<std::mutex> lock(mu_);
  return logs_.at(static_cast<size_t>(i));
}

void NodeChaos::Loop() {
  // The servers are this thread's children: it owns the cluster from start to end.
  auto cluster = std::make_unique<NatsClusterProcess>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    cluster_ = std::move(cluster);
    for (int i = 0; i < cluster_->size(); ++i) {
      urls_.push_back(cluster_->url(i));
      logs_.push_back(cluster_->dir(i) + "/nats-server.log");
      up_.push_back(true);
    }
    url_list_ = cluster_->url();
    state_ = State::kIdle;
  }
  cv_.notify_all();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (state_ == State::kKillPlanned) {
      if (Clock::now() < kill_at_) {
        cv_.wait_until(lock, kill_at_);
        continue;
      }
      state_ = State::kKilling;
      lock.unlock();
      DoKill();
      lock.lock();
      continue;
    }
    if (state_ == State::kDown) {
      if (!restart_now_ && Clock::now() < restart_at_) {
        cv_.wait_until(lock, restart_at_);
        continue;
      }
      state_ = State::kRestarting;
      lock.unlock();
      DoRestart();
      lock.lock();
      continue;
    }
    cv_.wait(lock);
  }
  lock.unlock();
  cluster_.reset();  // kills every server, from the thread that started them
}

void NodeChaos::DoKill() {
  NodeKill k;
  int victim, fallback, down_ms;
  {
    std::lock_guard<std::mutex> lock(mu_);
    k = planned_;
    victim = victim_;
    fallback = fallback_;
    down_ms = down_ms_;
  }
  // Asked before every kill (it answers at once while the stream is healthy), so that random
  // kills that happen to hit the leader are known too.
  agentckpt::StatusOr<int> leader = cluster_->StreamLeader(leader_stream_);
  k.targeted_leader = victim < 0;
  if (victim < 0) {
    victim = leader.ok() ? *leader : fallback;
    if (!leader.ok())
      k.error = "leader unknown (" + leader.status().ToString() + "), killed n" +
                std::to_string(fallback + 1) + " instead";
  }
  k.node = victim;
  k.leader_known = leader.ok();
  k.was_leader = leader.ok() && *leader == victim;
  cluster_->Kill(victim);
  k.kill_t = WallMillis();
  {
    std::lock_guard<std::mutex> lock(mu_);
    up_[static_cast<size_t>(victim)] = false;
    kills_.push_back(k);
    restart_at_ = Clock::now() + std::chrono::milliseconds(down_ms);
    restart_now_ = false;
    state_ = State::kDown;
  }
  cv_.notify_all();
}

void NodeChaos::DoRestart() {
  int node;
  {
    std::lock_guard<std::mutex> lock(mu_);
    node = kills_.back().node;
  }
  cluster_->Restart(node);  // aborts the process with the logs if the server cannot start
  const double t = WallMillis();
  {
    std::lock_guard<std::mutex> lock(mu_);
    up_[static_cast<size_t>(node)] = true;
    kills_.back().restart_t = t;
    restart_now_ = false;
    state_ = State::kHealing;
  }
  cv_.notify_all();
  Status healthy = WaitHealthy(kStreamHealthyTimeoutMs);
  {
    std::lock_guard<std::mutex> lock(mu_);
    kills_.back().healthy_t = WallMillis();
    kills_.back().healthy = healthy.ok();
    if (!healthy.ok()) {
      NodeKill& k = kills_.back();
      k.error += (k.error.empty() ? "" : "; ") + healthy.ToString();
    }
    state_ = State::kIdle;
  }
  cv_.notify_all();
}

Status NodeChaos::WaitHealthy(int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (const std::string& stream : streams_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return agentckpt::UnavailableError("stopping");
    }
    Status st = cluster_->WaitForStreamHealthy(
        stream, NatsClusterProcess::kSize,
        static_cast<int>(std::max<int64_t>(1, RemainingMs(deadline))));
    if (!st.ok()) return st;
  }
  if (consumer_.empty()) return agentckpt::OkStatus();
  return WaitConsumerHealthy(url_list_, consumer_stream_, consumer_,
                             static_cast<int>(std::max<int64_t>(1, RemainingMs(deadline))));
}

Status NodeChaos::WaitQuiet(int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                    [this] { return state_ == State::kIdle; })) {
    return agentckpt::DeadlineExceededError("the cluster did not get quiet within " +
                                            std::to_string(timeout_ms) + " ms");
  }
  return agentckpt::OkStatus();
}

void NodeChaos::PlanKill(int cycle, const std::string& phase, double delay_ms, int victim,
                         int fallback, int down_ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != State::kIdle) return;  // never two at a time (the caller waited: not reached)
    planned_ = NodeKill{};
    planned_.cycle = cycle;
    planned_.phase = phase;
    victim_ = victim;
    fallback_ = fallback;
    down_ms_ = down_ms;
    kill_at_ = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(delay_ms * 1000));
    state_ = State::kKillPlanned;
  }
  cv_.notify_all();
}

void NodeChaos::FireKillNow() {
  std::unique_lock<std::mutex> lock(mu_);
  if (state_ == State::kKillPlanned) {
    planned_.phase = "end";
    kill_at_ = Clock::now();
    cv_.notify_all();
  }
  cv_.wait(lock, [this] { return state_ != State::kKillPlanned && state_ != State::kKilling; });
}

void NodeChaos::RestartKilledBefore(int cycle) {
  std::unique_lock<std::mutex> lock(mu_);
  if ((state_ == State::kDown || state_ == State::kRestarting) && !kills_.empty() &&
      kills_.back().cycle < cycle) {
    restart_now_ = true;  // a restart already under way is waited for
    cv_.notify_all();
    cv_.wait(lock, [this] { return state_ != State::kDown && state_ != State::kRestarting; });
  }
}

Status NodeChaos::Heal(int timeout_ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::kKillPlanned) state_ = State::kIdle;  // not done: dropped
    if (state_ == State::kDown) restart_now_ = true;
  }
  cv_.notify_all();
  return WaitQuiet(timeout_ms);
}

std::vector<NodeKill> NodeChaos::kills() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kills_;
}

int NodeChaos::DownDuring(double from_t, double to_t) const {
  std::lock_guard<std::mutex> lock(mu_);
  int down = 0;
  for (const NodeKill& k : kills_) {
    if (k.kill_t <= to_t && (k.restart_t == 0 || k.restart_t >= from_t)) down = 1;
  }
  return down;
}

bool NodeChaos::EventWithin(double from_t, double to_t) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const NodeKill& k : kills_) {
    const double end = k.healthy_t > 0 ? k.healthy_t : to_t;  // not healthy yet: up to now
    if (k.kill_t <= to_t && end >= from_t) return true;
  }
  return false;
}

}  // namespace chaos
