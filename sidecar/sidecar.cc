#include "sidecar/sidecar.h"

#include <chrono>
#include <utility>

#include "common/status_macros.h"
#include "sidecar/json_log.h"
#include "workspace/git_workspace.h"
#ifdef AGENTCKPT_HAVE_RESTORE
#include "sidecar/restore_service.h"
#endif

namespace agentckpt {

#ifndef AGENTCKPT_HAVE_RESTORE
class RestoreService {};
#endif

using nlohmann::json;

namespace {

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json ErrorBody(const std::string& code, const std::string& message) {
  return {{"error", {{"code", code}, {"message", message}}}};
}

}  // namespace

bool Sidecar::RestoreAvailable() {
#ifdef AGENTCKPT_HAVE_RESTORE
  return true;
#else
  return false;
#endif
}

Sidecar::Sidecar(const SidecarConfig& config, Env* env) : config_(config), env_(env) {}

Sidecar::~Sidecar() { Stop(); }

void Sidecar::Stop() {
  {
    std::lock_guard<std::mutex> lock(periodic_mu_);
    stopping_ = true;
  }
  periodic_cv_.notify_all();
  if (periodic_.joinable()) periodic_.join();
  if (http_) http_->Stop();
  if (nats_) nats_->Close();
}

std::string Sidecar::Subject(const std::string& suffix) const {
  return "agent." + config_.agent_id + "." + suffix;
}

StatusOr<std::unique_ptr<Sidecar>> Sidecar::Create(const SidecarConfig& config, Env* env) {
  std::unique_ptr<Sidecar> s(new Sidecar(config, env));
  auto store = OpenStore(config.store_url);
  if (!store.ok()) {
    if (store.status().code() == StatusCode::kInvalidArgument) {
      return InvalidArgumentError("CKPT_STORE (--store): " + store.status().message());
    }
    return store.status().WithContext("CKPT_STORE " + config.store_url);
  }
  s->store_ = std::move(store).value();

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
  auto link = NatsLink::Connect(no, &s->metrics_);
  if (!link.ok()) return link.status();
  s->nats_ = std::move(link).value();

  PositionReader position;
  if (!config.js_stream.empty()) {
    NatsLink* nats = s->nats_.get();
    std::string stream = config.js_stream, consumer = config.js_consumer;
    position = [nats, stream, consumer] { return nats->ReadConsumerPosition(stream, consumer); };
  }
  WorkspaceReader workspace;
  if (!config.workspace_dir.empty()) {
    std::string dir = config.workspace_dir;
    workspace = [dir] { return ReadWorkspace(dir); };
  }
  Sidecar* self = s.get();
  EventSink events = [self](const std::string& event, const json& payload) {
    Status st = self->nats_->Publish(event, self->Subject(event), Dump(payload));
    if (!st.ok()) LogWarn("event dropped", {{"event", event}, {"reason", st.ToString()}});
  };
  WriterOptions wo;
  wo.agent_id = config.agent_id;
  wo.keep = config.keep;
  wo.ttl_days = config.ttl_days;
  s->writer_ = std::make_unique<CheckpointWriter>(env, s->store_.get(), &s->context_, &s->metrics_,
                                                  wo, std::move(position), std::move(workspace),
                                                  std::move(events));

  ApiDeps deps;
  deps.agent_id = config.agent_id;
  deps.context = &s->context_;
  deps.writer = s->writer_.get();
  deps.store = s->store_.get();
  deps.metrics = &s->metrics_;
  deps.body_max_bytes = config.http_body_max_bytes;
  deps.readiness = [self] { return self->Readiness(); };
#ifdef AGENTCKPT_HAVE_RESTORE
  s->restore_ = std::make_unique<RestoreService>(env, s->store_.get(), s->nats_.get(), config);
  s->restore_->set_metrics(&s->metrics_);
  RestoreService* restore = s->restore_.get();
  deps.restore.run = [restore] { return restore->Run(); };
  deps.restore.last = [restore] { return restore->Last(); };
#endif
  s->router_ = std::make_unique<ApiRouter>(std::move(deps));
  s->http_ = std::make_unique<HttpServer>(config.http_host, config.http_port,
                                          config.http_body_max_bytes, s->router_.get());
  return s;
}

json Sidecar::Readiness() {
  Status store = store_->Ping();
  bool nats = nats_->Connected();
  return {{"ready", store.ok() && nats},
          {"store", store.ok() ? "ok" : store.ToString()},
          {"nats", nats ? "connected" : "disconnected"}};
}

Status Sidecar::Start() {
  auto latest = store_->GetLatestVerified(config_.agent_id);
  if (latest.ok()) {
    context_.Seed(latest->checkpoint);
    LogInfo("context seeded from the latest checkpoint",
            {{"checkpointId", latest->checkpoint.checkpoint_id},
             {"sequenceNumber", latest->checkpoint.sequence_number}});
  } else if (latest.status().code() != StatusCode::kNotFound) {
    LogWarn("cannot read the latest checkpoint", {{"reason", latest.status().ToString()}});
  }
#ifdef AGENTCKPT_HAVE_RESTORE
  // Restore at start, before the API listens (once /healthz answers, GET /v1/restoration has
  // the result), when the store holds any checkpoint of the agent (even if none verifies:
  // the restore then reports what it skipped).
  auto any = store_->List(config_.agent_id, 1);
  if (config_.restore_on_start && any.ok() && !any->empty()) {
    auto result = restore_->Run();
    if (!result.ok()) LogError("restore at start failed", {{"reason", result.status().ToString()}});
  }
#endif
  Status listening = http_->Start();
  if (!listening.ok()) {
    return InvalidArgumentError("CKPT_HTTP_ADDR (--http-addr): " + listening.message());
  }
  RETURN_IF_ERROR(nats_->Subscribe(Subject("checkpoint.create"),
                                   [this](const NatsRequest& r) { OnCreateRequest(r); }));
  RETURN_IF_ERROR(nats_->Subscribe(Subject("checkpoint.restore"),
                                   [this](const NatsRequest& r) { OnRestoreRequest(r); }));
  periodic_ = std::thread([this] { PeriodicLoop(); });
  LogInfo("sidecar started", {{"agentId", config_.agent_id},
                              {"http", config_.http_host + ":" + std::to_string(config_.http_port)},
                              {"store", config_.store_url},
                              {"periodS", config_.period_s},
                              {"restore", RestoreAvailable()}});
  return OkStatus();
}

void Sidecar::PeriodicLoop() {
  std::unique_lock<std::mutex> lock(periodic_mu_);
  while (!stopping_) {
    periodic_cv_.wait_for(lock, std::chrono::seconds(config_.period_s));
    if (stopping_) break;
    lock.unlock();
    auto r = writer_->WriteIfChanged(TriggerReason::kPeriodic);
    (void)r;  // failures are reported by the writer
    lock.lock();
  }
}

void Sidecar::Respond(const NatsRequest& req, const json& body) {
  if (req.reply.empty()) return;
  Status s = nats_->Publish("reply", req.reply, Dump(body));
  if (!s.ok()) LogWarn("reply dropped", {{"subject", req.subject}, {"reason", s.ToString()}});
}

void Sidecar::OnCreateRequest(const NatsRequest& req) {
  TriggerReason trigger = TriggerReason::kManual;
  std::string task_id;
  json body = json::parse(req.data.empty() ? std::string("{}") : req.data, nullptr, false);
  std::string problem;
  if (body.is_discarded() || !body.is_object()) {
    problem = "payload: expected a JSON object";
  } else {
    if (body.contains("trigger")) {
      const json& t = body["trigger"];
      auto parsed = t.is_string() ? ParseTriggerReason(t.get<std::string>()) : std::nullopt;
      if (!parsed ||
          (*parsed != TriggerReason::kManual && *parsed != TriggerReason::kPreCompaction)) {
        problem = "trigger: expected \"manual\" or \"pre_compaction\"";
      } else {
        trigger = *parsed;
      }
    }
    if (body.contains("taskId")) {
      if (body["taskId"].is_string()) {
        task_id = body["taskId"].get<std::string>();
      } else {
        problem = "taskId: expected a string";
      }
    }
  }
  if (!problem.empty()) {
    LogWarn("checkpoint request rejected", {{"subject", req.subject}, {"reason", problem}});
    Respond(req, ErrorBody("INVALID_ARGUMENT", problem));
    return;
  }
  auto written = writer_->Write(trigger, task_id);
  if (written.ok()) {
    Respond(req, written->ToJson());
  } else {
    Respond(req, ErrorBody(std::string(StatusCodeName(written.status().code())),
                           written.status().message()));
  }
}

void Sidecar::OnRestoreRequest(const NatsRequest& req) {
#ifdef AGENTCKPT_HAVE_RESTORE
  auto result = restore_->Run();
  if (result.ok()) {
    Respond(req, *result);
  } else {
    Respond(req, ErrorBody(std::string(StatusCodeName(result.status().code())),
                           result.status().message()));
  }
#else
  Respond(req, ErrorBody("UNAVAILABLE", "restore is not available"));
#endif
}

Status Sidecar::Shutdown() {
  int64_t start = env_->NowMonotonicMicros();
  {
    std::lock_guard<std::mutex> lock(periodic_mu_);
    stopping_ = true;
  }
  periodic_cv_.notify_all();
  if (periodic_.joinable()) periodic_.join();
  // Intake stops first, so the pre_shutdown checkpoint holds every accepted change and is the
  // last checkpoint this process writes.
  context_.Freeze();
  auto written = writer_->WriteFinal(TriggerReason::kPreShutdown);
  Status flushed = nats_->Flush(1000);
  if (!flushed.ok()) {
    LogWarn("nats flush at shutdown failed; buffered events are lost",
            {{"reason", flushed.ToString()}, {"bufferedBytes", nats_->BufferedBytes()}});
  }
  http_->Stop();
  nats_->Close();
  LogInfo("sidecar stopped",
          {{"checkpointed", written.ok()},
           {"shutdownMs", static_cast<double>(env_->NowMonotonicMicros() - start) / 1000.0}});
  return written.ok() ? OkStatus() : written.status();
}

}  // namespace agentckpt
