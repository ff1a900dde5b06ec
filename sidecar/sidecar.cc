#include "sidecar/sidecar.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <optional>
#include <utility>

#include "common/status_macros.h"
#include "common/time_format.h"
#include "context/create_request.h"
#include "crypto/encrypting_store.h"
#include "nats/subjects.h"
#include "observability/json_log.h"
#include "sidecar/restore_service.h"
#include "sidecar/sidecar_metrics.h"
#include "store/journal_load.h"
#include "store/open_store.h"
#include "tracing/span.h"
#include "workspace/git_workspace.h"

namespace agentckpt {

using nlohmann::json;

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

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The error reply to a NATS request: the shape of the HTTP API's error bodies; `field` is the
// offending field's path, or "" when there is none.
json ErrorBody(const std::string& code, const std::string& message, const std::string& field = "") {
  return {{"error", {{"code", code}, {"message", message}, {"field", field}}}};
}

// The span of a NATS request the sidecar handles ("process <operation>"), a child of the
// message's traceparent header when it has a valid one.
tracing::Span RequestSpan(const NatsRequest& req, const std::string& operation,
                          const std::string& agent_id) {
  tracing::TraceContext parent;
  if (auto remote = tracing::ParseTraceparent(req.traceparent)) parent = *remote;
  tracing::Span span =
      tracing::StartSpanWithParent("process " + operation, tracing::SpanKind::kConsumer, parent);
  span.SetString("messaging.system", "nats");
  span.SetString("messaging.destination.name", req.subject);
  span.SetString("gen_ai.agent.id", agent_id);
  return span;
}

}  // namespace

bool Sidecar::RestoreAvailable() { return true; }

Sidecar::Sidecar(const SidecarConfig& config, Env* env) : config_(config), env_(env) {}

Sidecar::~Sidecar() {
  Stop();
  SetLogRedactor(nullptr);
}

void Sidecar::Stop() {
  {
    std::lock_guard<std::mutex> lock(periodic_mu_);
    stopping_ = true;
  }
  periodic_cv_.notify_all();
  if (periodic_.joinable()) periodic_.join();
  if (sweeper_) sweeper_->Stop();
  if (lease_) lease_->Stop();
  if (creates_) creates_->Stop();
  if (http_) http_->Stop();
  if (nats_) nats_->Close();
}

std::string Sidecar::Subject(const std::string& suffix) const {
  return subjects::AgentPrefix(config_.agent_id) + suffix;
}

StatusOr<std::unique_ptr<Sidecar>> Sidecar::Create(const SidecarConfig& config, Env* env) {
  std::unique_ptr<Sidecar> s(new Sidecar(config, env));
  // Redaction first: from here on nothing the agent sends is logged, stored or published with
  // its secrets (docs/security.md).
  Metrics* metrics = &s->metrics_;
  s->redactor_ = std::make_unique<Redactor>(
      [metrics](const std::string& rule, uint64_t n) { metrics->CountRedactions(rule, n); });
  if (!config.redact_patterns_file.empty()) {
    Status patterns = s->redactor_->AddPatternsFromFile(config.redact_patterns_file);
    if (!patterns.ok()) {
      return InvalidArgumentError("CKPT_REDACT_PATTERNS (--redact-patterns): " +
                                  patterns.message());
    }
  }
  SetLogRedactor(s->redactor_.get());
  s->context_.set_redactor(s->redactor_.get());
  s->context_.set_ledger_limits(
      LedgerLimits{config.ledger_keep, config.ledger_keep_age_s * int64_t{1000}});
  NatsLinkOptions no;
  no.url = config.nats_url;
  no.name = "agentckpt-" + config.agent_id;
  no.creds_file = config.nats_creds;
  no.nkey_seed_file = config.nats_nkey_seed;
  no.nkey_public = config.nats_nkey;
  no.user = config.nats_user;
  no.password = config.nats_password;
  no.tls_ca_file = config.nats_tls_ca;
  no.tls_cert_file = config.nats_tls_cert;
  no.tls_key_file = config.nats_tls_key;
  no.reconnect_wait_ms = config.nats_reconnect_wait_ms;
  no.buffer_bytes = config.nats_buffer_bytes;
  // A jetstream:// store connects with the sidecar's own NATS settings.
  StoreConnectOptions store_connect{config.nats_url, no};
  // Each start-up step says how long it took, so a slow or stuck start shows where it waits.
  int64_t step_start_us = env->NowMonotonicMicros();
  auto step_ms = [env, &step_start_us] {
    int64_t now = env->NowMonotonicMicros(), ms = (now - step_start_us) / 1000;
    step_start_us = now;
    return ms;
  };
  auto store = OpenStore(config.store_url, store_connect);
  if (!store.ok()) {
    if (store.status().code() == StatusCode::kInvalidArgument) {
      return InvalidArgumentError("CKPT_STORE (--store): " + store.status().message());
    }
    return store.status().WithContext("CKPT_STORE " + config.store_url);
  }
  // Encryption at rest (docs/encryption.md); without a key, a guard that refuses encrypted data.
  auto wrapped = crypto::WrapStoreForEncryption(std::move(store).value(), config.agent_id,
                                                config.encryption_key_file,
                                                config.encryption_old_key_files, env);
  if (!wrapped.ok()) return wrapped.status();
  s->store_ = std::move(wrapped).value();
  LogInfo("store opened", {{"store", config.store_url}, {"durationMs", step_ms()}});

  auto link = NatsLink::Connect(no, &s->metrics_);
  if (!link.ok()) return link.status();
  s->nats_ = std::move(link).value();
  LogInfo("nats link created", {{"connected", s->nats_->Connected()}, {"durationMs", step_ms()}});

  PositionReader position;
  if (!config.js_stream.empty()) {
    NatsLink* nats = s->nats_.get();
    std::string stream = config.js_stream, consumer = config.js_consumer;
    s->positions_ = std::make_unique<PositionCache>(
        env, [nats, stream, consumer] { return nats->ReadConsumerPosition(stream, consumer); },
        PositionCacheOptions{});
    PositionCache* positions = s->positions_.get();
    // While NATS is down nothing is served from the cache: the writer then uses (and counts) the
    // last known position, as for a failed read.
    position = [positions, nats]() -> StatusOr<NatsPosition> {
      if (!nats->Connected()) return UnavailableError("nats not connected");
      return positions->Get();
    };
  }
  WorkspaceReader workspace;
  if (!config.workspace_dir.empty()) {
    std::string dir = config.workspace_dir;
    workspace = [dir] { return ReadWorkspace(dir); };
  }
  Sidecar* self = s.get();
  EventSink events = [self](const std::string& event, const json& payload) {
    self->PublishEvent(event, payload);
  };
  JournalOptions jo;
  jo.agent_id = config.agent_id;
  jo.durability = ParseDurability(config.durability).value_or(Durability::kSync);
  jo.async_flush_ms = config.async_flush_ms;
  jo.max_entries = config.journal_max_entries;
  jo.max_bytes = config.journal_max_bytes;
  s->journal_ = std::make_unique<JournalWriter>(env, s->store_.get(), jo);
  JournalWriter* journal = s->journal_.get();
  s->context_.set_journal([journal, metrics](JournalKind kind, const std::string& payload) {
    auto head = journal->Record(kind, payload);
    if (head.ok() && !payload.empty() && journal->durability() != Durability::kMemory) {
      metrics->CountJournalEntry(std::string(JournalKindName(kind)));
    }
    return head;
  });
  ContextState* context = &s->context_;
  metrics->SetLiveSource([context, journal] { return LiveFiguresOf(*context, *journal); });
  WriterOptions wo;
  wo.agent_id = config.agent_id;
  wo.keep = config.keep;
  wo.ttl_days = config.ttl_days;
  s->writer_ = std::make_unique<CheckpointWriter>(env, s->store_.get(), &s->context_, &s->metrics_,
                                                  wo, std::move(position), std::move(workspace),
                                                  std::move(events));
  s->writer_->RequireLease([self](const Status& reason) { self->OnLeaseLost(reason, false); });
  CheckpointWriter* cw = s->writer_.get();
  s->journal_->set_force_checkpoint([cw](const std::string& reason) {
    auto r = cw->WriteForced(reason);
    (void)r;  // failures are reported by the writer
  });
  s->journal_->set_request_checkpoint(
      [self](const std::string& reason) { self->RequestJournalCheckpoint(reason); });
  LeaseKeeperOptions lo;
  lo.agent_id = config.agent_id;
  lo.holder = MakeLeaseHolderId();
  lo.holder_is_dead = [own = lo.holder](const std::string& holder) {
    return IsDeadLocalHolder(holder, own);
  };
  lo.ttl_ms = int64_t{config.lease_ttl_s} * 1000;
  s->lease_ = std::make_unique<LeaseKeeper>(env, s->store_.get(), lo);
  RetentionSweeperOptions so;
  so.interval_ms = int64_t{config.ttl_sweep_s} * 1000;
  LeaseKeeper* lease = s->lease_.get();
  so.may_sweep = [lease] { return lease->held(); };
  s->sweeper_ = std::make_unique<RetentionSweeper>(env, s->store_.get(), std::move(so));
  CoalescerOptions co;
  co.rate_per_s = config.create_rate_per_s;
  co.burst = config.create_burst;
  CheckpointWriter* writer = s->writer_.get();
  s->creates_ = std::make_unique<CreateCoalescer>(
      env,
      [writer](TriggerReason trigger, const std::string& task_id) -> json {
        auto written = writer->Write(trigger, task_id);
        if (written.ok()) return written->ToJson();
        return ErrorBody(std::string(StatusCodeName(written.status().code())),
                         written.status().message());
      },
      co);

  ApiDeps deps;
  deps.agent_id = config.agent_id;
  deps.context = &s->context_;
  deps.writer = s->writer_.get();
  deps.store = s->store_.get();
  deps.metrics = &s->metrics_;
  deps.body_max_bytes = config.http_body_max_bytes;
  deps.bearer_token = config.http_token;
  s->readiness_ = std::make_unique<ReadinessProbe>(
      env, [self] { return self->Readiness(); }, ReadinessProbeOptions{});
  ReadinessProbe* readiness = s->readiness_.get();
  deps.readiness = [readiness] { return readiness->Current(); };
  deps.journal = s->journal_.get();
  LeaseKeeper* keeper = s->lease_.get();
  deps.lease_info = [keeper] { return keeper->Describe(); };
  deps.retry_after_s = std::max(1, config.lease_ttl_s / 3);
  deps.env = env;
  s->restore_ = std::make_unique<RestoreService>(env, s->store_.get(), s->nats_.get(), config,
                                                 s->redactor_.get());
  s->restore_->set_metrics(&s->metrics_);
  RestoreService* restore = s->restore_.get();
  deps.restore.run = [restore] { return restore->Run(); };
  deps.restore.agent_start = [restore] { return restore->RunForAgentStart(); };
  deps.restore.last = [restore] { return restore->Last(); };
  GateApiDeps gd;
  gd.env = env;
  gd.context = &s->context_;
  gd.journal = s->journal_.get();
  gd.default_ttl_s = config.gate_ttl_s;
  gd.on_change = [self](const std::string& event, const Gate& gate) {
    self->OnGateChange(event, gate);
  };
  gd.may_write = [keeper]() -> Status {
    if (keeper->held()) return OkStatus();
    return UnavailableError("standby: " + keeper->Describe().value("detail", "no writer lease"));
  };
  s->gates_ = std::make_unique<GateApi>(std::move(gd));
  deps.gates = s->gates_.get();
  s->router_ = std::make_unique<ApiRouter>(std::move(deps));
  s->http_ = std::make_unique<HttpServer>(config.http_host, config.http_port,
                                          config.http_body_max_bytes, s->router_.get());
  return s;
}

json Sidecar::Readiness() {
  Status store = store_->Ping();
  bool nats = nats_->Connected();
  Status gate = writer_->WriteGate();
  json lease = lease_->Describe();
  bool writing = gate.ok() && lease.value("state", "") == "held";
  json out = {{"ready", store.ok() && nats && writing},
              {"store", store.ok() ? "ok" : store.ToString()},
              {"nats", nats ? "connected" : "disconnected"},
              {"lease", lease}};
  if (!writing) {
    std::string state = lease.value("state", "");
    std::string detail = lease.value("detail", "");
    if (!gate.ok() && state != "standby") {
      out["reason"] = gate.message();
    } else if (state == "standby") {
      out["reason"] =
          "standby: " + (detail.empty() ? std::string("waiting for the lease") : detail);
    } else {
      out["reason"] = "lease " + state + (detail.empty() ? "" : ": " + detail);
    }
  }
  return out;
}

void Sidecar::OnLeaseLost(const Status& reason, bool from_renewal) {
  // From a failed put the writer has fenced itself and published checkpoint.failed (and holds
  // its lock: no call back into it); from a renewal both are done here.
  journal_->Fence(FailedPreconditionError(reason.message()));
  if (from_renewal) {
    writer_->Fence(reason);
    json payload = {
        {"operation", "lease"}, {"trigger", "lease_renewal"}, {"reason", reason.ToString()}};
    Status st = nats_->Publish("checkpoint.failed", subjects::CheckpointFailed(config_.agent_id),
                               Dump(payload));
    if (!st.ok())
      LogWarn("event dropped", {{"event", "checkpoint.failed"}, {"reason", st.ToString()}});
  }
  LogError("this sidecar lost the writer lease and stops writing checkpoints",
           {{"agentId", config_.agent_id}, {"reason", reason.message()}});
}

void Sidecar::Activate(const Lease& lease) {
  std::lock_guard<std::mutex> lock(activate_mu_);
  if (activated_) return;
  activated_ = true;
  LogInfo("writer lease acquired", {{"agentId", config_.agent_id},
                                    {"holder", lease.holder},
                                    {"epoch", lease.epoch},
                                    {"ttlS", config_.lease_ttl_s}});
  // One load serves both the context seed and the restore at start.
  const int64_t load_start = env_->NowMonotonicMicros();
  auto latest = store_->GetLatestVerified(config_.agent_id);
  const double load_ms = static_cast<double>(env_->NowMonotonicMicros() - load_start) / 1000.0;
  // The context continues from the checkpoint plus the journal after it (docs/journal.md). No
  // update was accepted before this point (standby refuses them), so nothing is overwritten.
  Checkpoint seed;
  seed.agent_id = config_.agent_id;
  if (latest.ok()) {
    seed = latest->checkpoint;
  } else if (latest.status().code() != StatusCode::kNotFound) {
    LogWarn("cannot read the latest checkpoint", {{"reason", latest.status().ToString()}});
  }
  JournalLoad folded = FoldStoredJournal(store_.get(), &seed);
  if (!folded.error.empty()) {
    // Without the journal the context would go back in time: stay out of the writer's seat.
    LogError("cannot read the journal; the context is seeded from the checkpoint alone",
             {{"reason", folded.error}});
  }
  if (folded.fold.stopped) {
    // Entries after a damaged one are unusable: the journal continues above every stored
    // sequence, chained to the last good entry, from a checkpoint of the folded context (written
    // below), so the chain restarts on sound ground.
    auto stats = store_->GetJournalStats(config_.agent_id);
    if (stats.ok() && stats->last_sequence > seed.journal->sequence) {
      seed.journal->sequence = stats->last_sequence;
    }
  }
  context_.Seed(seed);
  LogInfo("context seeded", {{"checkpointId", seed.checkpoint_id},
                             {"sequenceNumber", seed.sequence_number},
                             {"journalSequence", folded.fold.last_sequence},
                             {"journal", DescribeJournalLoad(folded)}});
  // Restore at start, before the API listens (once /healthz answers, GET /v1/restoration has
  // the result), when the store holds any checkpoint of the agent (even if none verifies:
  // the restore then loads again and reports what it skipped).
  if (config_.restore_on_start) {
    auto report = [](const StatusOr<nlohmann::json>& result) {
      if (!result.ok())
        LogError("restore at start failed", {{"reason", result.status().ToString()}});
    };
    if (latest.ok()) {
      PreloadedLatest preloaded{std::move(latest).value(), load_ms};
      report(restore_->Run(&preloaded));
    } else if (auto any = store_->List(config_.agent_id, 1); any.ok() && !any->empty()) {
      report(restore_->Run());
    }
  }
  // The restore says "active"; an agent with a pending gate is still waiting on a human.
  for (const Gate& g : context_.Gates()) {
    if (g.decision) continue;
    PublishEvent("status", {{"agentId", config_.agent_id},
                            {"status", "suspended"},
                            {"at", FormatRfc3339Millis(env_->NowUnixMillis())}});
    break;
  }
  writer_->SetLease(LeaseToken{lease.holder, lease.epoch});
  JournalWriter* journal = journal_.get();
  writer_->SetJournal([journal](int64_t sequence) { journal->CheckpointWritten(sequence); },
                      folded.base_sequence);
  JournalPosition head = seed.journal.value_or(JournalPosition{0, kJournalGenesisSha256});
  journal_->Activate(LeaseToken{lease.holder, lease.epoch}, head, folded.base_sequence,
                     folded.tail_bytes);
  if (folded.fold.stopped) {
    auto r = writer_->WriteForced("journal_damaged");
    (void)r;  // failures are reported by the writer
  }
}

Status Sidecar::Start() {
  auto lease = lease_->TryAcquire();
  if (lease.ok()) {
    Activate(*lease);
  } else {
    LogWarn("standby: another sidecar holds the writer lease; retrying",
            {{"agentId", config_.agent_id}, {"reason", lease.status().ToString()}});
  }
  // Subscribed before the API listens: once /readyz answers 200, requests on the NATS subjects
  // (a gate's resolution included) reach this sidecar.
  RETURN_IF_ERROR(nats_->Subscribe(subjects::CheckpointCreate(config_.agent_id),
                                   [this](const NatsRequest& r) { OnCreateRequest(r); }));
  RETURN_IF_ERROR(nats_->Subscribe(subjects::CheckpointRestore(config_.agent_id),
                                   [this](const NatsRequest& r) { OnRestoreRequest(r); }));
  RETURN_IF_ERROR(nats_->Subscribe(subjects::GateResolve(config_.agent_id),
                                   [this](const NatsRequest& r) { OnGateResolveRequest(r); }));
  if (nats_->Connected()) {
    // A round trip, so the server has the subscriptions before /readyz says ready (bounded; when
    // NATS is down the subscriptions are sent on connect).
    Status flushed = nats_->Flush(2000);
    if (!flushed.ok()) LogWarn("nats flush at start failed", {{"reason", flushed.ToString()}});
  }
  // Said before the API answers anything, so it is in the log before the first request.
  const std::string& host = config_.http_host;
  bool loopback =
      host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
  if (!loopback && config_.http_token.empty()) {
    LogWarn("the HTTP API listens beyond loopback without a token; set CKPT_HTTP_TOKEN_FILE",
            {{"http", host + ":" + std::to_string(config_.http_port)}});
  }
  Status listening = http_->Start();
  if (!listening.ok()) {
    return InvalidArgumentError("CKPT_HTTP_ADDR (--http-addr): " + listening.message());
  }
  periodic_ = std::thread([this] { PeriodicLoop(); });
  sweeper_->Start();
  lease_->Start([this](const Lease& l) { Activate(l); },
                [this](const Status& reason) { OnLeaseLost(reason, true); });
  LogInfo("sidecar started", {{"agentId", config_.agent_id},
                              {"http", config_.http_host + ":" + std::to_string(config_.http_port)},
                              {"store", config_.store_url},
                              {"periodS", config_.period_s},
                              {"restore", RestoreAvailable()},
                              {"lease", lease_->Describe()}});
  return OkStatus();
}

void Sidecar::PeriodicLoop() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock<std::mutex> lock(periodic_mu_);
  Clock::time_point next_periodic = Clock::now() + std::chrono::seconds(config_.period_s);
  while (!stopping_) {
    // Wakes for the periodic checkpoint, and for the next expiry of a pending gate (a new gate
    // wakes the loop to recompute it), so gates expire durably even when nobody asks.
    Clock::time_point wake = next_periodic;
    int64_t now_ms = env_->NowUnixMillis();
    for (const Gate& g : context_.Gates()) {
      if (g.decision) continue;
      auto at =
          Clock::now() + std::chrono::milliseconds(std::max<int64_t>(0, g.expires_at_ms - now_ms));
      wake = std::min(wake, at);
    }
    if (journal_checkpoint_reason_.empty()) periodic_cv_.wait_until(lock, wake);
    if (stopping_) break;
    const std::string journal_reason = std::exchange(journal_checkpoint_reason_, std::string());
    lock.unlock();
    if (!journal_reason.empty()) {
      auto r = writer_->WriteForced(journal_reason);
      (void)r;  // failures are reported by the writer; the journal forces one at its bound
    }
    gates_->ExpireDue();
    if (Clock::now() >= next_periodic) {
      auto r = writer_->WriteIfChanged(TriggerReason::kPeriodic);
      (void)r;  // failures are reported by the writer
      next_periodic = Clock::now() + std::chrono::seconds(config_.period_s);
    }
    lock.lock();
  }
}

void Sidecar::RequestJournalCheckpoint(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(periodic_mu_);
    journal_checkpoint_reason_ = reason;
  }
  periodic_cv_.notify_all();
}

void Sidecar::OnGateResolveRequest(const NatsRequest& req) {
  tracing::Span span = RequestSpan(req, "gate.resolve", config_.agent_id);
  tracing::SpanScope scope(span);
  GateReply reply = gates_->Resolve(req.data, "");
  // Every sidecar of the agent receives the request; only the lease holder answers, so a standby
  // never answers first with STANDBY while the holder decides.
  if (reply.status == 503 && reply.body["error"].value("code", "") == "STANDBY") return;
  Respond(req, reply.body);
}

void Sidecar::OnGateChange(const std::string& event, const Gate& gate) {
  CountGateChange(event, gate, &metrics_);
  PublishEvent("gate." + event, GateToJson(gate));
  // A consistent cut records a new gate (its journal entry already made it durable, so a failed
  // checkpoint is reported by the writer and the gate stands). Without a journal (a store that
  // keeps none, or CKPT_DURABILITY=memory) every gate change is checkpointed instead, before the
  // reply, so a decision is never held in memory only.
  if (event == "requested" || journal_->durability() == Durability::kMemory) {
    auto written = writer_->Write(TriggerReason::kManual);
    (void)written;
  }
  if (event == "requested") {
    {
      // Taken so the notification cannot fall between the loop's reading of the gates and its
      // wait: the loop holds this lock for both.
      std::lock_guard<std::mutex> lock(periodic_mu_);
    }
    periodic_cv_.notify_all();  // the expiry sweep recomputes its next wake-up
  }
  if (event == "consumed") return;
  size_t pending = 0;
  for (const Gate& g : context_.Gates()) pending += g.decision ? 0 : 1;
  // suspended while any gate is pending; active again when the last one is decided.
  if (event == "requested" || pending == 0) {
    PublishEvent("status", {{"agentId", config_.agent_id},
                            {"status", pending > 0 ? "suspended" : "active"},
                            {"at", FormatRfc3339Millis(env_->NowUnixMillis())}});
  }
}

void Sidecar::Respond(const NatsRequest& req, const json& body) {
  if (req.reply.empty()) return;
  json redacted = body;
  redactor_->RedactJson(&redacted);
  Status s = nats_->Publish("reply", req.reply, Dump(redacted));
  if (!s.ok()) LogWarn("reply dropped", {{"subject", req.subject}, {"reason", s.ToString()}});
}

void Sidecar::PublishEvent(const std::string& event, const json& payload) {
  json redacted = payload;  // e.g. the reason of checkpoint.failed
  redactor_->RedactJson(&redacted);
  Status st = nats_->Publish(event, Subject(event), Dump(redacted));
  if (!st.ok()) LogWarn("event dropped", {{"event", event}, {"reason", st.ToString()}});
}

void Sidecar::OnCreateRequest(const NatsRequest& req) {
  // A write the coalescer runs on this thread is a child of this span; one it runs later, on
  // its own thread, starts a trace of its own.
  tracing::Span span = RequestSpan(req, "checkpoint.create", config_.agent_id);
  tracing::SpanScope scope(span);
  std::string field;
  auto parsed = ParseCreateRequest(req.data, &field);
  if (!parsed.ok()) {
    // Rejected before the writer: answered, and announced and counted as a failed checkpoint
    // of the trigger it asked for (manual unless it validly asked for pre_compaction).
    const Status& status = parsed.status();
    std::string trigger(TriggerReasonName(RequestedTrigger(req.data)));
    LogWarn("checkpoint request rejected",
            {{"subject", req.subject}, {"reason", status.message()}, {"field", field}});
    metrics_.CountCheckpointFailure(trigger, "invalid_argument");
    PublishEvent("checkpoint.failed", {{"operation", "checkpoint"},
                                       {"trigger", trigger},
                                       {"reason", status.ToString()},
                                       {"field", field}});
    Respond(req, ErrorBody(std::string(StatusCodeName(status.code())), status.message(), field));
    return;
  }
  // Admitted requests are coalesced into at most one pending write; the rest are refused.
  NatsRequest copy = req;
  creates_->Submit(*parsed, [this, copy](const json& body) { Respond(copy, body); });
}

void Sidecar::OnRestoreRequest(const NatsRequest& req) {
  tracing::Span span = RequestSpan(req, "checkpoint.restore", config_.agent_id);
  tracing::SpanScope scope(span);
  auto result = restore_->Run();
  span.SetError(result.status());
  if (result.ok()) {
    Respond(req, *result);
  } else {
    Respond(req, ErrorBody(std::string(StatusCodeName(result.status().code())),
                           result.status().message()));
  }
}

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
    LogWarn("nats flush at shutdown failed; buffered events are lost",
            {{"reason", flushed.ToString()}, {"bufferedBytes", nats_->BufferedBytes()}});
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
