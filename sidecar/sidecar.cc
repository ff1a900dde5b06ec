// The sidecar's construction: every part created and wired to the others (Create), and Stop.
// The rest of the class: sidecar_run.cc (start, the lease, the periodic loop),
// sidecar_nats_requests.cc (requests and events on NATS), sidecar_shutdown.cc.
#include "sidecar/sidecar.h"

#include <algorithm>
#include <utility>

#include "crypto/encrypting_store.h"
#include "nats/subjects.h"
#include "observability/json_log.h"
#include "restore/token_counter.h"
#include "sidecar/restore_service.h"
#include "sidecar/sidecar_metrics.h"
#include "store/open_store.h"
#include "workspace/git_workspace.h"

namespace agentckpt {

using nlohmann::json;

bool Sidecar::RestoreAvailable() { return true; }

Sidecar::Sidecar(const SidecarConfig& config, Env* env) : config_(config), env_(env) {}

Sidecar::~Sidecar() {
  Stop();
  if (tokenizer_preload_.joinable()) tokenizer_preload_.join();
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
  // The restore at start counts tokens; its encoding's tables (about 6 ms to load) are loaded on
  // the other core while the store opens and NATS connects.
  if (auto encoding = ParseTokenEncoding(config.tokenizer); encoding.ok()) {
    s->tokenizer_preload_ = std::thread([e = *encoding] { PreloadEncoding(e); });
  }
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
  // A SQLite store grows its WAL to its steady size at once: the sidecar writes for a long time.
  StoreConnectOptions store_connect{config.nats_url, no, /*sqlite_presize_wal=*/true};
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
  // Without a key the check that the agent's newest checkpoint is not encrypted is left to the
  // load at activation (Sidecar::Start): one read of the newest checkpoint per start, not two.
  auto wrapped = crypto::WrapStoreForEncryption(
      std::move(store).value(), config.agent_id, config.encryption_key_file,
      config.encryption_old_key_files, env, /*check_now=*/false);
  if (!wrapped.ok()) return wrapped.status();
  s->store_ = std::move(wrapped).value();
  if (std::string proxy = StoreProxyRoute(config.store_url); !proxy.empty()) {
    LogInfo("store opened",
            {{"store", config.store_url}, {"proxy", proxy}, {"durationMs", step_ms()}});
  } else {
    LogInfo("store opened", {{"store", config.store_url}, {"durationMs", step_ms()}});
  }

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
  LeaseKeeper* lease = s->lease_.get();
  s->journal_->set_confirm_lease([lease] { return lease->ConfirmHeld(); });
  RetentionSweeperOptions so;
  so.interval_ms = int64_t{config.ttl_sweep_s} * 1000;
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
        return ErrorReply(written.status());
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

}  // namespace agentckpt
