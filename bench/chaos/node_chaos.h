// NodeChaos: the 3-node nats-server cluster of a `--store jetstream` chaos run
// (tests/support/nats_cluster.h) and the node kills in it. One thread of its own starts the
// cluster, SIGKILLs one server when a planned kill is due, restarts it when its down time is
// over (or when the harness says its bound is reached), then waits until every watched stream
// and the watched durable consumer have a leader and a current replica besides it before it
// accepts the next kill: at most one server is down at a time, so the quorum (two of three) is
// always kept. The servers are children of that thread (they die with it, see
// NatsClusterProcess) and only it calls the cluster's non-thread-safe methods.
//
// Times in NodeKill are wall-clock Unix milliseconds (the harness's other measurements are).
// Thread-safe: every public method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"

namespace agentckpt::testing {
class NatsClusterProcess;
}

namespace chaos {

// One SIGKILL of a nats-server and its restart.
struct NodeKill {
  int cycle = 0;                 // the cycle that planned it
  std::string phase;             // work | restore | end (planned moment not reached by the end)
  int node = -1;                 // server index (name "n<node+1>")
  bool targeted_leader = false;  // chosen as the leader of the agent-record stream
  bool was_leader = false;       // led the agent-record stream when killed
  bool leader_known = false;     // the leader could be asked just before the kill (else
                                 // was_leader is false for want of knowing)
  double kill_t = 0;             // when it was killed
  double restart_t = 0;          // when the restarted server accepted connections (0: still down)
  double healthy_t = 0;          // when the health wait after the restart ended
  bool healthy = false;          // every watched stream and the consumer were healthy then
  std::string error;             // a health wait that timed out, a leader that could not be asked
  std::string Name() const { return "n" + std::to_string(node + 1); }
};

class NodeChaos {
 public:
  // `leader_stream`: the stream whose leader every third kill targets; `streams`: every stream
  // that must be healthy again (R3) before the next kill, `leader_stream` included;
  // `consumer_stream`/`consumer`: a durable consumer that must be healthy too ("": none).
  NodeChaos(std::string leader_stream, std::vector<std::string> streams,
            std::string consumer_stream, std::string consumer);
  // Stops the thread, which kills every server.
  ~NodeChaos();
  NodeChaos(const NodeChaos&) = delete;
  NodeChaos& operator=(const NodeChaos&) = delete;

  // Starts the thread and the cluster (NatsClusterProcess aborts the process if the cluster
  // cannot start). Returns when every server accepts connections and R3 streams can be placed.
  void Start();
  int size() const;
  // "nats://127.0.0.1:P1,nats://127.0.0.1:P2,nats://127.0.0.1:P3" and server i's URL.
  std::string url() const;
  std::string url(int i) const;
  // True while server i runs (not between its kill and its restart).
  bool up(int i) const;
  // The path of server i's log file.
  std::string log_path(int i) const;

  // Waits until no server is down and no health wait runs (the previous kill's restart may be
  // planned for later: it is waited for). kDeadlineExceeded after `timeout_ms`.
  agentckpt::Status WaitQuiet(int timeout_ms);
  // Plans one kill `delay_ms` from now (at most one planned or running at a time: call
  // WaitQuiet first). `victim`: a server index, or -1 for the current leader of the leader
  // stream (if it cannot be asked, `fallback` is killed and the kill says so). The server is
  // restarted `down_ms` after the kill unless RestartKilledBefore comes first.
  void PlanKill(int cycle, const std::string& phase, double delay_ms, int victim, int fallback,
                int down_ms);
  // A planned kill that is not done yet is done now (phase "end"); returns once it is done.
  void FireKillNow();
  // A server killed in a cycle before `cycle` and still down is restarted now; returns once it
  // accepts connections (the health wait goes on in the background).
  void RestartKilledBefore(int cycle);
  // Restarts any server that is down and waits until the cluster is quiet (WaitQuiet).
  agentckpt::Status Heal(int timeout_ms);
  // Every kill so far (the last one may still be running).
  std::vector<NodeKill> kills() const;
  // The number of servers down at some moment in [from_t, to_t] (wall-clock ms): 0 or 1.
  int DownDuring(double from_t, double to_t) const;
  // True if a server was killed, restarted or became healthy again in [from_t, to_t], or was
  // down at some moment of it.
  bool EventWithin(double from_t, double to_t) const;

 private:
  using Clock = std::chrono::steady_clock;
  enum class State { kStarting, kIdle, kKillPlanned, kKilling, kDown, kRestarting, kHealing };
  void Loop();
  void DoKill();
  void DoRestart();
  agentckpt::Status WaitHealthy(int timeout_ms);

  const std::string leader_stream_;
  const std::vector<std::string> streams_;
  const std::string consumer_stream_, consumer_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<agentckpt::testing::NatsClusterProcess> cluster_;  // used by the thread only
  std::vector<std::string> urls_;  // per server, set once the cluster runs
  std::string url_list_;
  std::vector<std::string> logs_;
  std::vector<bool> up_;
  State state_ = State::kStarting;
  bool stop_ = false;
  bool restart_now_ = false;
  Clock::time_point kill_at_, restart_at_;
  NodeKill planned_;  // the planned kill's cycle and phase
  int victim_ = -1, fallback_ = 0;
  int down_ms_ = 0;
  std::vector<NodeKill> kills_;
  std::thread thread_;
};

}  // namespace chaos
