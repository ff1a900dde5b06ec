#include "examples/reference_agent/agent_loop.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "common/time_format.h"

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
  json context;
  if (r.value("coldStart", true)) {
    model_.emplace(1, NowRfc3339());
    context = model_->ContextPatch();
    context["contextSummary"]["toolCallLog"] = json::array();
    resume["ckpt"] = nullptr;
    resume["seq"] = 0;
    resume["ackFloor"] = 0;
  } else {
    std::string id = r.value("checkpointId", "");
    HttpReply doc = CallSidecar("GET", "/v1/checkpoints/" + id);
    if (doc.status != 200) return Failed("GET /v1/checkpoints/" + id, doc);
    auto model = TaskModel::FromCheckpoint(doc.body);
    if (!model.ok()) return model.status();
    model_ = std::move(*model);
    context = {{"activeTask", doc.body["activeTask"]},
               {"contextSummary", doc.body["contextSummary"]}};
    resume["ckpt"] = id;
    resume["seq"] = doc.body.value("sequenceNumber", int64_t{0});
    const json& pos = doc.body["natsPosition"];
    resume["ackFloor"] = pos.is_object() ? pos.value("lastAckedSequence", uint64_t{0}) : 0;
  }
  resume["task"] = model_->task();
  resume["done"] = model_->done();
  resume["global"] = model_->global_step();
  tasks_started_ = 1;
  Status st = journal_->Append(resume);
  if (!st.ok()) return st;
  // The sidecar's live context becomes exactly the restored state the agent continues from.
  HttpReply put = CallSidecar("PUT", "/v1/context", context);
  if (put.status != 200) return Failed("PUT /v1/context", put);
  std::printf("[agent] resumed (%s) at task %d step %d from checkpoint %s\n", source.c_str(),
              model_->task(), model_->done(), resume["ckpt"].dump().c_str());
  std::fflush(stdout);
  return agentckpt::OkStatus();
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
    // Journal first: a crash between the journal and the ack counts as a duplicate when the
    // message comes back, never as an effect nobody recorded.
    Status st = journal_->Append({{"k", "effect"}, {"key", key}, {"seq", m.stream_sequence}});
    if (st.ok()) {
      json result = {{"key", key}, {"agent", options_.agent_id}, {"handled", m.data.size()}};
      st = inbox_->PublishResult(result.dump());
    }
    if (st.ok()) st = inbox_->Ack(m);
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
  Status st = journal_->Append({{"k", "work"},
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
  HttpReply r = CallSidecar("POST", "/v1/tool-calls", tool);
  if (r.status != 201) return Failed("POST /v1/tool-calls", r);
  r = CallSidecar("PATCH", "/v1/context", model_->ContextPatch());
  if (r.status != 200) return Failed("PATCH /v1/context", r);
  if (model_->done() % options_.precompaction_every == 0) {
    json ask = {{"trigger", "pre_compaction"},
                {"taskId", "task-" + std::to_string(model_->task())}};
    r = CallSidecar("POST", "/v1/checkpoints", ask);
    if (r.status != 201) return Failed("POST /v1/checkpoints", r);
  }
  return agentckpt::OkStatus();
}

int ReferenceAgent::Run() {
  auto journal = SideEffectJournal::Open(options_.journal_path);
  if (!journal.ok()) {
    std::fprintf(stderr, "[agent] %s\n", journal.status().ToString().c_str());
    return 1;
  }
  journal_ = std::move(*journal);
  if (!journal_->Append({{"k", "start"}}).ok()) return 1;
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
  return journal_->Append({{"k", "stop"}}).ok() ? 0 : 1;
}

}  // namespace reference_agent
