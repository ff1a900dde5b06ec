#include "examples/reference_agent/agent_loop.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "common/time_format.h"
#include "examples/reference_agent/effect_sink.h"

namespace reference_agent {
namespace {

using agentckpt::Status;
using nlohmann::json;

std::string NowRfc3339() {
  return agentckpt::FormatRfc3339Millis(static_cast<int64_t>(WallMillis()));
}

const char* ToolOfPhase(const std::string& phase) {
  if (phase == "gathering") return "web_search";
  if (phase == "planning") return "outline_editor";
  if (phase == "executing") return "write_file";
  return "style_check";
}

Status Failed(const std::string& what, const HttpReply& r) {
  return agentckpt::UnavailableError(what + ": HTTP " + std::to_string(r.status) + " " +
                                     (r.status == 0 ? r.error : r.body.dump()));
}

constexpr int kSinkTimeoutMs = 5000;

}  // namespace

ReferenceAgent::ReferenceAgent(AgentOptions options, const std::atomic<bool>* stop)
    : options_(std::move(options)),
      stop_(stop),
      sidecar_(options_.sidecar_url, std::chrono::milliseconds(10000)) {}

HttpReply ReferenceAgent::CallSidecar(const std::string& method, const std::string& path,
                                      const json& body) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.sidecar_wait_ms);
  for (;;) {
    HttpReply r = sidecar_.Call(method, path, body);
    bool retry = r.status == 0 || r.status == 503;
    if (!retry || stop_->load() || std::chrono::steady_clock::now() > deadline) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Status ReferenceAgent::SendUpdate(const std::string& method, const std::string& path,
                                  const json& body, int want_status, const char* what) {
  HttpReply r = CallSidecar(method, path, body);
  if (r.status != want_status) return Failed(method + " " + path, r);
  const json& b = r.body;
  return probe_->Append({{"k", "ack"},
                         {"what", what},
                         {"journalSequence", b.is_object() ? b.value("journalSequence", -1) : -1},
                         {"durable", b.is_object() && b.value("durable", false)},
                         {"global", model_->global_step()}});
}

Status ReferenceAgent::Restore() {
  HttpReply health = CallSidecar("GET", "/healthz");
  if (health.status != 200) return Failed("sidecar /healthz", health);
  // The start-up restoration is current when it used the newest checkpoint; otherwise (only
  // this agent restarted, the sidecar kept running and wrote newer ones) ask for a fresh one.
  HttpReply restoration = CallSidecar("GET", "/v1/restoration");
  HttpReply newest = CallSidecar("GET", "/v1/checkpoints?limit=1");
  if (newest.status != 200) return Failed("GET /v1/checkpoints", newest);
  const json& list = newest.body["checkpoints"];
  bool current = false;
  if (restoration.status == 200) {
    bool cold = restoration.body.value("coldStart", false);
    current = list.empty() ? cold
                           : !cold && restoration.body.value("sequenceNumber", int64_t{-1}) ==
                                          list[0].value("sequenceNumber", int64_t{-2});
  }
  std::string source = "get";
  if (!current) {
    source = "post";
    restoration = CallSidecar("POST", "/v1/restore");
    if (restoration.status != 200) return Failed("POST /v1/restore", restoration);
  }
  const json& r = restoration.body;
  json resume = {{"k", "resume"},
                 {"source", source},
                 {"coldStart", r.value("coldStart", true)},
                 {"handled", r.value("handled", 0)},
                 {"pending", r.value("pending", 0)},
                 {"restoreTotalMs", r.value("totalMs", 0.0)},
                 {"promptTokens", r.value("promptTokens", 0)}};
  // The sidecar's live context is the restored checkpoint plus the journal after it: every
  // update it acknowledged. The agent continues from it (the checkpoint alone can be behind).
  HttpReply live = CallSidecar("GET", "/v1/context");
  auto from_live = live.status == 200 ? TaskModel::FromCheckpoint(live.body)
                                      : TaskModel::FromCheckpoint(json::object());
  if (r.value("coldStart", true)) {
    resume["ckpt"] = nullptr;
    resume["seq"] = 0;
    resume["ackFloor"] = 0;
  } else {
    std::string id = r.value("checkpointId", "");
    HttpReply doc = CallSidecar("GET", "/v1/checkpoints/" + id);
    if (doc.status != 200) return Failed("GET /v1/checkpoints/" + id, doc);
    resume["ckpt"] = id;
    resume["seq"] = doc.body.value("sequenceNumber", int64_t{0});
    const json& pos = doc.body["natsPosition"];
    resume["ackFloor"] = pos.is_object() ? pos.value("lastAckedSequence", uint64_t{0}) : 0;
    if (!from_live.ok()) from_live = TaskModel::FromCheckpoint(doc.body);
    if (!from_live.ok()) return from_live.status();
  }
  const bool cold = !from_live.ok();
  if (cold) {
    model_.emplace(1, NowRfc3339());
  } else {
    model_ = std::move(*from_live);
  }
  resume["task"] = model_->task();
  resume["done"] = model_->done();
  resume["global"] = model_->global_step();
  tasks_started_ = 1;
  Status st = probe_->Append(resume);
  if (!st.ok()) return st;
  if (cold) {
    json context = model_->ContextPatch();
    context["contextSummary"]["toolCallLog"] = json::array();
    st = SendUpdate("PUT", "/v1/context", context, 200, "put");
    if (!st.ok()) return st;
  }
  std::printf("[agent] resumed (%s) at task %d step %d from checkpoint %s\n", source.c_str(),
              model_->task(), model_->done(), resume["ckpt"].dump().c_str());
  std::fflush(stdout);
  return agentckpt::OkStatus();
}

void ReferenceAgent::MaybeCrash(const char* point, const std::string& key) {
  if (options_.crash_at != point || ++crash_point_reached_ != options_.crash_on_call) return;
  // The line is fsynced before the kill, so the harness knows which call was cut where.
  (void)probe_->Append({{"k", "crash"}, {"point", point}, {"key", key}});
  ::kill(::getpid(), SIGKILL);
}

Status ReferenceAgent::WriteThroughLedger(const InboxMessage& m, const std::string& key) {
  const json begin = {{"toolName", "publish_result"},
                      {"effect", "write"},
                      {"idempotencyKey", key},
                      {"inputSummary", "result of inbox message " + key}};
  for (int attempt = 0; attempt < 4; ++attempt) {
    MaybeCrash("before_begin", key);
    HttpReply begun = CallSidecar("POST", "/v1/tool-calls/begin", begin);
    if (begun.status == 200) return agentckpt::OkStatus();  // done before: skip the effect
    const json& b = begun.body;
    if (begun.status == 409 && b.is_object() && b.value("code", "") == "OUTCOME_UNKNOWN") {
      // Never re-run blindly: ask the system the effect went to, then reconcile.
      auto executed = SinkLookup(inbox_->connection(), options_.agent_id, key, kSinkTimeoutMs);
      if (!executed.ok()) return executed.status();
      Status st = probe_->Append({{"k", "unknown"}, {"key", key}, {"executed", *executed}});
      if (!st.ok()) return st;
      HttpReply rec =
          CallSidecar("POST", "/v1/tool-calls/" + b.value("callId", "") + "/reconcile",
                      {{"outcome", *executed ? "succeeded" : "not_executed"},
                       {"outputSummary", *executed ? "found in the sink" : ""},
                       {"note", "checked in the sink after the call's outcome was lost"}});
      // 404 / 409: an earlier try of this reconcile was applied but its reply was lost.
      if (rec.status != 200 && rec.status != 404 && rec.status != 409) {
        return Failed("reconcile " + key, rec);
      }
      continue;  // begin again: succeeded replays (200), not_executed frees the key (201)
    }
    if (begun.status != 201 || !b.is_object()) return Failed("begin " + key, begun);
    const std::string call_id = b.value("callId", "");
    MaybeCrash("after_begin", key);
    auto started = std::chrono::steady_clock::now();
    json result = {{"key", key}, {"agent", options_.agent_id}, {"handled", m.data.size()}};
    auto executions = SinkExecute(inbox_->connection(), options_.agent_id, key, m.stream_sequence,
                                  result.dump(), kSinkTimeoutMs);
    if (!executions.ok()) return executions.status();  // left open: reconciled next time
    MaybeCrash("after_effect", key);
    double took =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    HttpReply ended = CallSidecar("POST", "/v1/tool-calls/" + call_id + "/end",
                                  {{"success", true},
                                   {"outputSummary", "result " + key + " delivered"},
                                   {"durationMs", static_cast<int64_t>(took)}});
    // 409 ALREADY_COMPLETED: an earlier try of this end was applied but its reply was lost.
    if (ended.status != 200 && ended.status != 409) return Failed("end " + key, ended);
    Status st = probe_->Append({{"k", "ended"}, {"key", key}});
    if (!st.ok()) return st;
    MaybeCrash("after_end", key);
    return agentckpt::OkStatus();
  }
  return agentckpt::UnavailableError("write call " + key + ": no outcome after 4 begins");
}

void ReferenceAgent::HandleInbox() {
  auto batch = inbox_->Fetch(2, 10);
  if (!batch.ok()) {
    std::fprintf(stderr, "[agent] inbox: %s\n", batch.status().ToString().c_str());
    return;
  }
  for (size_t i = 0; i < batch->size(); ++i) {
    InboxMessage& m = (*batch)[i];
    std::string key = "msg:" + std::to_string(m.stream_sequence);
    const uint64_t seq = m.stream_sequence;
    Status st = WriteThroughLedger(m, key);
    if (st.ok()) st = inbox_->Ack(m);
    // The server confirmed the ack (AckSync): a consumer leader elected later may still count
    // the message as pending for a while (nats-server 2.9), which the harness must tell apart.
    if (st.ok()) st = probe_->Append({{"k", "acked"}, {"key", key}, {"seq", seq}});
    if (!st.ok()) {
      std::fprintf(stderr, "[agent] %s: %s\n", key.c_str(), st.ToString().c_str());
      for (size_t j = i; j < batch->size(); ++j) AgentInbox::Release((*batch)[j]);
      return;
    }
  }
}

Status ReferenceAgent::Step() {
  if (model_->finished()) {
    model_.emplace(model_->task() + 1, NowRfc3339());
    ++tasks_started_;
  }
  HandleInbox();
  auto started = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(options_.step_ms));  // the tool's work
  std::string phase = PhaseOfStep(model_->done() + 1);
  std::string what = model_->DoNextStep();
  double took =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  std::string key = "step:" + std::to_string(model_->task()) + ":" + std::to_string(model_->done());
  Status st = probe_->Append({{"k", "work"},
                              {"key", key},
                              {"task", model_->task()},
                              {"step", model_->done()},
                              {"global", model_->global_step()},
                              {"phase", phase}});
  if (!st.ok()) return st;
  json tool = {{"toolName", ToolOfPhase(phase)},
               {"timestamp", NowRfc3339()},
               {"inputSummary", "task-" + std::to_string(model_->task()) + " " + what},
               {"outputSummary", "ok: " + what + " (" + phase + ")"},
               {"durationMs", static_cast<int64_t>(took)},
               {"success", true}};
  st = SendUpdate("POST", "/v1/tool-calls", tool, 201, "tool_call");
  if (st.ok()) st = SendUpdate("PATCH", "/v1/context", model_->ContextPatch(), 200, "patch");
  if (!st.ok()) return st;
  if (options_.precompaction_every > 0 && model_->done() % options_.precompaction_every == 0) {
    json ask = {{"trigger", "pre_compaction"},
                {"taskId", "task-" + std::to_string(model_->task())}};
    HttpReply r = CallSidecar("POST", "/v1/checkpoints", ask);
    if (r.status != 201) return Failed("POST /v1/checkpoints", r);
  }
  return agentckpt::OkStatus();
}

int ReferenceAgent::Run() {
  auto probe = ProbeLog::Open(options_.probe_log_path);
  if (!probe.ok()) {
    std::fprintf(stderr, "[agent] %s\n", probe.status().ToString().c_str());
    return 1;
  }
  probe_ = std::move(*probe);
  if (!probe_->Append({{"k", "start"}}).ok()) return 1;
  auto inbox = AgentInbox::Open(options_.nats_url, options_.stream, options_.agent_id, 30000);
  if (!inbox.ok()) {
    std::fprintf(stderr, "[agent] %s\n", inbox.status().ToString().c_str());
    return 1;
  }
  inbox_ = std::move(*inbox);
  Status st = Restore();
  while (st.ok() && !stop_->load()) {
    if (options_.max_tasks > 0 && model_->finished() && tasks_started_ >= options_.max_tasks) {
      break;
    }
    st = Step();
  }
  if (!st.ok() && !stop_->load()) {
    std::fprintf(stderr, "[agent] stopping: %s\n", st.ToString().c_str());
    return 1;
  }
  return probe_->Append({{"k", "stop"}}).ok() ? 0 : 1;
}

}  // namespace reference_agent
