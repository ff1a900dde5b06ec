// LeaseKeeper: holds the agent's writer lease for the sidecar (see CheckpointStore::AcquireLease).
//
// Start() runs one thread that tries to acquire the lease every retry interval until it gets it
// (standby), then renews it every ttl/3 until Stop() or until a renewal finds it taken over.
// `on_acquired` is called once with the lease, `on_lost` at most once with the store's
// "lease lost: ..." status; both run on the keeper's thread. A store that cannot be reached is
// retried; the lease is then judged by the store at the next put. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "common/env.h"
#include "common/status.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

struct LeaseKeeperOptions {
  std::string agent_id;
  std::string holder;        // unique per live process: see MakeLeaseHolderId
  int64_t ttl_ms = 15'000;   // renewed every ttl/3
  int64_t retry_ms = 1'000;  // standby retry interval (capped at ttl/3)
  // When set and it says the current (live) holder is a process that no longer runs, the lease
  // is taken over at once instead of after its ttl: a sidecar restarted in the same pod after a
  // crash must not wait for its own dead predecessor. See IsDeadLocalHolder.
  HolderIsDead holder_is_dead;
};

// "HOST/PID": POD_NAME (else the host name) and this process's id. Unique among live processes
// of a host (and a pod's name is unique in its namespace); a process restarted in the same pod
// or host gets the same HOST part, which is what IsDeadLocalHolder relies on.
std::string MakeLeaseHolderId();

// True when `holder` ("HOST/PID") has the HOST part of `own_holder`, a PID other than this
// process's, and no process with that PID exists here (kill(pid, 0) fails with ESRCH). Anything
// else (another host or pod, a live or unknown PID, another format) is false: such a lease is
// only taken when it expires.
bool IsDeadLocalHolder(const std::string& holder, const std::string& own_holder);

class LeaseKeeper {
 public:
  LeaseKeeper(Env* env, CheckpointStore* store, LeaseKeeperOptions options);
  ~LeaseKeeper();  // Stop()

  // One acquisition attempt, without the thread. The lease, or the store's error
  // (kFailedPrecondition "lease held by ..." while another sidecar holds it). A lease held by a
  // dead holder (options.holder_is_dead) is taken over in one lease change
  // (CheckpointStore::AcquireOrTakeOverLease): the epoch still rises and fences that holder.
  StatusOr<Lease> TryAcquire();

  // Starts the thread (acquire loop unless TryAcquire already succeeded, then renewals).
  // `on_acquired` runs on that thread once the lease is held. When it returns kUnavailable
  // (the holder could not take up its work yet, e.g. the store did not answer), the keeper keeps
  // the lease, renews it as usual and calls `on_acquired` again every retry_ms until it returns
  // anything else; the latest kUnavailable message is the lease's "detail" meanwhile.
  // `on_lost` runs once when a renewal finds the lease taken over.
  void Start(std::function<Status(const Lease&)> on_acquired,
             std::function<void(const Status&)> on_lost);

  // Stops the thread; the lease is left to expire (see Release). Idempotent.
  void Stop();

  // Stops the thread and gives the lease up so a standby sidecar takes over at once. OK when
  // no lease is held.
  Status Release();

  // Called before a journal append is answered as durable. OK when no other sidecar can have
  // taken the lease over yet: the last acquisition or renewal that succeeded was sent less than
  // 2/3 of the ttl ago by the monotonic clock (the rest of the ttl covers clock skew between
  // hosts). Otherwise (a process paused or cut off from the store past that window) it renews
  // the lease first, on the calling thread: OK when the renewal finds this keeper's lease (no
  // one took it over in between: a takeover raises the epoch for good), kFailedPrecondition
  // "lease lost: ..." when someone did or the lease is not held, kUnavailable when the store
  // cannot say. Thread-safe; costs one clock read while the window is open.
  Status ConfirmHeld();

  // True while this keeper holds the lease (as far as it knows).
  bool held() const;
  // {"state": "held"|"standby"|"lost"|"released", "holder", "epoch", "expiresAt", "detail"}.
  nlohmann::json Describe() const;

 private:
  void Loop(std::function<Status(const Lease&)> on_acquired,
            std::function<void(const Status&)> on_lost);
  bool WaitMs(int64_t ms);  // false when stopping
  // One renewal of `token`'s lease; on success the lease is stored and confirmed.
  StatusOr<Lease> Renew(const LeaseToken& token);
  // Marks the lease confirmed by a store call sent at `sent_us` (monotonic); called with mu_.
  void ConfirmedLocked(int64_t sent_us);

  Env* env_;
  CheckpointStore* store_;
  LeaseKeeperOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::optional<Lease> lease_;
  int64_t confirmed_until_us_ = 0;  // monotonic; see ConfirmHeld
  std::string state_ = "standby";
  std::string detail_;
  std::thread thread_;
};

}  // namespace agentckpt
