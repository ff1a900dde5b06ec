// The sidecar's shutdown (docs/operations.md): intake stops, the journal is flushed, the
// pre_shutdown checkpoint is written within the shutdown budget, the lease is released.
#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "observability/json_log.h"
#include "sidecar/sidecar.h"

namespace agentckpt {
namespace {

// Runs `fn` on its own thread and waits for it at most `ms`; nullopt if it has not returned by
// then (it is left to finish on its own: the process is about to exit). For store calls at
// shutdown, whose retries must not outlast the shutdown budget.
template <typename T>
std::optional<T> WithinMs(int64_t ms, std::function<T()> fn) {
  auto done = std::make_shared<std::promise<T>>();
  std::future<T> result = done->get_future();
  std::thread([done, fn = std::move(fn)] { done->set_value(fn()); }).detach();
  if (result.wait_for(std::chrono::milliseconds(std::max<int64_t>(0, ms))) !=
      std::future_status::ready) {
    return std::nullopt;
  }
  return result.get();
}

// What the shutdown keeps, after the pre_shutdown write, for releasing the lease and flushing
// NATS (1 s) and exiting.
constexpr int64_t kShutdownReserveMs = 2000;
// How long the shutdown waits for the triggers (periodic, lease renewal, NATS creates) to stop.
constexpr int64_t kStopIntakeMs = 1000;

}  // namespace

Status Sidecar::Shutdown() {
  int64_t start = env_->NowMonotonicMicros();
  const int64_t budget_ms = int64_t{config_.shutdown_budget_s} * 1000;
  auto elapsed_ms = [this, start] { return (env_->NowMonotonicMicros() - start) / 1000; };
  // Intake stops first, so the pre_shutdown checkpoint holds every accepted change and is the
  // last checkpoint this process writes. The periodic trigger, the lease renewals and the NATS
  // create requests may each be inside a store call: with a stalled store, waiting for them must
  // not eat the budget, so the wait is bounded (they are left to finish on their own).
  const bool intake_stopped = WithinMs<bool>(kStopIntakeMs, [this] {
                                {
                                  std::lock_guard<std::mutex> lock(periodic_mu_);
                                  stopping_ = true;
                                }
                                periodic_cv_.notify_all();
                                if (periodic_.joinable()) periodic_.join();
                                lease_->Stop();  // no renewal races the final write
                                creates_->Stop();
                                return true;
                              }).has_value();
  if (!intake_stopped) {
    LogWarn("shutdown: a trigger is still waiting on the store", {{"waitedMs", kStopIntakeMs}});
  }
  context_.Freeze();
  if (Status flushed = journal_->Close(); !flushed.ok()) {
    LogWarn("journal not flushed at shutdown", {{"reason", flushed.ToString()}});
  }
  // The write and its store retries (and the wait for a write still in progress) get the
  // shutdown budget (CKPT_SHUTDOWN_BUDGET_S) less the reserve; a store that has not finished by
  // then is left behind, and the log says so.
  const int64_t write_ms = std::max<int64_t>(500, budget_ms - kShutdownReserveMs - elapsed_ms());
  CheckpointWriter* writer = writer_.get();
  using GateAndWrite = std::pair<Status, StatusOr<WriteResult>>;
  auto result = WithinMs<GateAndWrite>(write_ms, [writer] {
    Status gate = writer->WriteGate();
    if (!gate.ok()) return GateAndWrite(gate, StatusOr<WriteResult>(gate));
    return GateAndWrite(gate, writer->WriteFinal(TriggerReason::kPreShutdown));
  });
  const bool store_answered = result.has_value();
  Status gate = store_answered ? result->first : OkStatus();
  StatusOr<WriteResult> written =
      store_answered ? std::move(result->second)
                     : StatusOr<WriteResult>(DeadlineExceededError(
                           "the store did not finish the pre_shutdown checkpoint within " +
                           std::to_string(write_ms) + " ms of the shutdown budget"));
  if (!gate.ok()) {
    LogWarn("no pre_shutdown checkpoint: this sidecar is not the writer",
            {{"reason", gate.message()}});
  } else if (written.ok()) {
    LogInfo("pre_shutdown checkpoint saved", {{"checkpointId", written->checkpoint_id},
                                              {"sequenceNumber", written->sequence_number}});
  } else {
    // A store that did not answer may still complete the write after this process is gone.
    LogError(store_answered ? "pre_shutdown checkpoint NOT saved: context changes since the last "
                              "checkpoint logged as written are lost"
                            : "pre_shutdown checkpoint NOT confirmed saved: the store did not "
                              "answer within the shutdown budget; context changes since the last "
                              "checkpoint logged as written are lost unless the store completes "
                              "the request later",
             {{"reason", written.status().ToString()},
              {"budgetS", config_.shutdown_budget_s},
              {"storeAnswered", store_answered}});
  }
  // Releasing the lease is a store call too: bounded by what is left of the reserve.
  LeaseKeeper* lease = lease_.get();
  auto released = store_answered ? WithinMs<Status>(kShutdownReserveMs / 2,
                                                    [lease] { return lease->Release(); })
                                 : std::optional<Status>();
  if (!released.has_value() || !released->ok()) {
    LogWarn("cannot release the writer lease; it expires on its own",
            {{"reason", released.has_value() ? released->ToString()
                                             : std::string("the store did not answer in time")}});
  }
  // What is left of the budget (less a margin before the watchdog) bounds the flush and drain.
  const int64_t left_ms = std::max<int64_t>(0, budget_ms - 300 - elapsed_ms());
  const int64_t flush_ms = std::max<int64_t>(1, std::min<int64_t>(1000, left_ms / 2));
  Status flushed = nats_->Flush(static_cast<int>(flush_ms));
  if (!flushed.ok()) {
    const auto buffered = nats_->BufferedBytes();
    LogWarn(buffered > 0 ? "nats flush at shutdown failed; buffered events are lost"
                         : "nats flush at shutdown failed; no events were waiting in its buffer",
            {{"reason", flushed.ToString()}, {"bufferedBytes", buffered}});
  }
  // Not closed: the process exits next (see HttpServer::Drain).
  http_->Drain(std::min<int64_t>(2000, std::max<int64_t>(0, budget_ms - 300 - elapsed_ms())));
  nats_->Close();
  LogInfo("sidecar stopped",
          {{"checkpointed", written.ok()},
           {"shutdownMs", static_cast<double>(env_->NowMonotonicMicros() - start) / 1000.0}});
  return written.ok() || !gate.ok() ? OkStatus() : written.status();
}

}  // namespace agentckpt
