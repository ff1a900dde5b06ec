// Sidecar: the `agentckpt run` daemon assembled from its parts: the store, the NATS link, the
// context, the checkpoint writer (five triggers), the HTTP API, the NATS control subjects and,
// when built in, restore. Start() brings it up; Shutdown() runs the pre_shutdown sequence.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "common/env.h"
#include "common/status.h"
#include "context/checkpoint_writer.h"
#include "context/context_state.h"
#include "context/create_coalescer.h"
#include "context/journal_writer.h"
#include "http/api_router.h"
#include "http/gate_api.h"
#include "http/http_server.h"
#include "nats/nats_link.h"
#include "observability/metrics.h"
#include "sidecar/config.h"
#include "sidecar/lease_keeper.h"
#include "sidecar/position_cache.h"
#include "sidecar/readiness_probe.h"
#include "sidecar/retention_sweeper.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

class RestoreService;

class Sidecar {
 public:
  // Opens the store and the NATS connection (which keeps retrying if the server is down).
  // kInvalidArgument naming the setting for an unusable setting; kUnavailable/kDataLoss/... from
  // the store.
  static StatusOr<std::unique_ptr<Sidecar>> Create(const SidecarConfig& config, Env* env);
  ~Sidecar();

  // Takes the agent's writer lease; with it, seeds the context from the latest verified
  // checkpoint, runs the start-up restore (when built in and enabled), starts the HTTP API,
  // subscribes to the control subjects and starts the periodic trigger and lease renewals.
  // When another sidecar holds the lease, starts on standby instead: the HTTP API answers
  // (readyz: "standby: lease held by ..."), checkpoint writes are refused, and the lease is
  // retried until the holder releases it or it expires; then the seeding and restore run. With
  // the lease but a store that fails the read of the agent's state, it keeps the lease, starts
  // the API closed in the same way (saying why) and the lease keeper retries the seeding.
  // kUnavailable/kInvalidArgument if the HTTP address cannot be bound.
  Status Start();

  // Stops the periodic trigger and the create-request intake, writes the pre_shutdown
  // checkpoint, releases the writer lease (so a standby sidecar takes over at once), flushes
  // NATS (bounded), stops serving HTTP (503 from then on; the listener is closed by Stop() or the
  // destructor, or not at all by a process that exits next) and closes NATS. Returns the
  // checkpoint's status (on standby or with the lease lost, nothing is written). Call once.
  Status Shutdown();

  // Stops the periodic trigger and the HTTP API and closes NATS, without a checkpoint (for a
  // failed start). Idempotent; also done by the destructor.
  void Stop();

  // True: restore is always built in (reported as "restore" in the agent status).
  static bool RestoreAvailable();

 private:
  Sidecar(const SidecarConfig& config, Env* env);
  void PeriodicLoop();
  // The journal's early checkpoint request: the periodic thread writes it (never a request).
  void RequestJournalCheckpoint(const std::string& reason);
  // With the lease held: seeds the context and runs the start-up restore. Once. kInvalidArgument
  // (nothing seeded, the writer stays closed) when the agent's newest checkpoint is encrypted
  // and no key is set (crypto::IsMissingKeyRefusal): the sidecar must not start.
  // kUnavailable (nothing seeded, the writer stays closed, the lease is kept and the lease
  // keeper calls again) when the newest checkpoint or the journal cannot be read.
  Status Activate(const Lease& lease);
  // Activate's kUnavailable: says `what` failed and why (refusals, log), counts the attempt.
  Status NotActivatedYet(const std::string& what, const std::string& reason);
  void OnLeaseLost(const Status& reason, bool from_renewal);
  void OnCreateRequest(const NatsRequest& req);
  void OnRestoreRequest(const NatsRequest& req);
  // Approval gates (docs/gates.md): agent.{id}.gate.resolve, and what follows a durable change
  // (the gate.* event, the checkpoint at a new gate, the agent's status).
  void OnGateResolveRequest(const NatsRequest& req);
  void OnGateChange(const std::string& event, const Gate& gate);
  void Respond(const NatsRequest& req, const nlohmann::json& body);
  // The error reply to a NATS request, in the shape of the HTTP API's error bodies; `field` is
  // the offending field's path, or "" when there is none.
  static nlohmann::json ErrorReply(const Status& status, const std::string& field = "");
  // Publishes `payload` on agent.{id}.{event}, redacted (dropped and logged if it cannot be).
  void PublishEvent(const std::string& event, const nlohmann::json& payload);
  nlohmann::json Readiness();
  std::string Subject(const std::string& suffix) const;

  SidecarConfig config_;
  Env* env_;
  Metrics metrics_;
  std::unique_ptr<Redactor> redactor_;  // secrets out of context, events, logs and prompts
  std::unique_ptr<CheckpointStore> store_;
  std::unique_ptr<NatsLink> nats_;
  std::unique_ptr<PositionCache> positions_;  // the consumer position for each checkpoint
  ContextState context_;
  std::unique_ptr<JournalWriter> journal_;
  std::unique_ptr<CheckpointWriter> writer_;
  std::unique_ptr<RestoreService> restore_;
  std::unique_ptr<GateApi> gates_;
  std::unique_ptr<ApiRouter> router_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<LeaseKeeper> lease_;
  std::unique_ptr<CreateCoalescer> creates_;
  std::unique_ptr<RetentionSweeper> sweeper_;  // CKPT_TTL_DAYS, while the lease is held
  std::unique_ptr<ReadinessProbe> readiness_;  // /readyz, never behind the store
  std::mutex activate_mu_;
  bool activated_ = false;
  int activation_failures_ = 0;  // guarded by activate_mu_

  std::mutex periodic_mu_;
  std::condition_variable periodic_cv_;
  bool stopping_ = false;
  std::string journal_checkpoint_reason_;  // a checkpoint the journal asked for, not yet written
  std::thread periodic_;
  // Loads the tokenizer's tables while the store opens and NATS connects, so that the restore
  // at start does not wait for them; joined at the end of Start (or by the destructor).
  std::thread tokenizer_preload_;
};

}  // namespace agentckpt
