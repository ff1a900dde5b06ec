// Traces of a real sidecar process (real nats-server, real SQLite store) received by a loopback
// OTLP collector in this test: the HTTP request's span is the child of the caller's traceparent,
// the checkpoint write, the store calls, the journal, the ledger and the gates hang under it, the
// events carry the trace as a NATS header, a restore's phase spans last what checkpoint.restored
// reports (within 1 ms) and checkpoint.restored names the trace. The sidecar's SIGTERM does not
// wait on a collector that never answers.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cmath>

#include "nats/subjects.h"
#include "tests/sidecar/sidecar_test_env.h"
#include "tests/tracing/otlp_receiver.h"
#include "tracing/trace_context.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;
using Spans = std::vector<ReceivedSpan>;

constexpr char kTrace[] = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr char kCallerSpan[] = "00f067aa0ba902b7";

std::string Traceparent(const std::string& trace = kTrace, const std::string& span = kCallerSpan) {
  return "00-" + trace + "-" + span + "-01";
}

const ReceivedSpan* Find(const Spans& spans, const std::string& name,
                         const std::string& parent = "*") {
  for (const ReceivedSpan& s : spans) {
    if (s.name == name && (parent == "*" || s.parent_span_id == parent)) return &s;
  }
  return nullptr;
}

std::vector<const ReceivedSpan*> ChildrenOf(const Spans& spans, const std::string& parent) {
  std::vector<const ReceivedSpan*> out;
  for (const ReceivedSpan& s : spans) {
    if (s.parent_span_id == parent) out.push_back(&s);
  }
  return out;
}

class SidecarTracingTest : public SidecarEnvTest {
 protected:
  std::map<std::string, std::string> TracingEnv(std::map<std::string, std::string> extra = {}) {
    extra["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver_.endpoint();
    extra["OTEL_SERVICE_NAME"] = "agentckpt-it";
    extra["OTEL_BSP_SCHEDULE_DELAY"] = "20";
    return extra;
  }
  // The next event whose subject ends with `suffix` (others skipped); null on timeout.
  json NextEventEndingWith(const std::string& suffix) {
    for (int i = 0; i < 50; ++i) {
      json e = NextEvent(10000);
      if (e.is_null()) return e;
      std::string subject = e["subject"];
      if (subject.size() >= suffix.size() &&
          subject.compare(subject.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return e;
      }
    }
    return nullptr;
  }
  // Checks the restore spans of trace `trace_id` against a checkpoint.restored payload: the
  // root agentckpt.restore (child of `parent`, "" for none), one child per phase, each lasting
  // what the payload reports within 1 ms, and the root's attributes.
  void ExpectRestoreSpans(const std::string& trace_id, const std::string& parent,
                          const json& restored) {
    Spans spans = receiver_.WaitFor([&](const Spans& all) {
      int n = 0;
      for (const ReceivedSpan& s : all) {
        n += s.trace_id == trace_id && s.name.rfind("agentckpt.restore", 0) == 0;
      }
      return n >= 6;
    });
    const ReceivedSpan* root = nullptr;
    for (const ReceivedSpan& s : spans) {
      if (s.trace_id == trace_id && s.name == "agentckpt.restore") root = &s;
    }
    ASSERT_NE(root, nullptr) << "no agentckpt.restore span in trace " << trace_id;
    EXPECT_EQ(root->parent_span_id, parent);
    EXPECT_EQ(root->service, "agentckpt-it");
    EXPECT_EQ(root->Attr("gen_ai.agent.id"), kProcAgent);
    EXPECT_EQ(root->Attr("agentckpt.checkpoint.id"), restored["checkpointId"].get<std::string>());
    EXPECT_EQ(root->Attr("agentckpt.checkpoint.sequence"),
              std::to_string(restored["sequenceNumber"].get<int64_t>()));
    EXPECT_EQ(root->Attr("agentckpt.prompt.tokens"),
              std::to_string(restored["promptTokens"].get<int64_t>()));
    EXPECT_EQ(root->Attr("agentckpt.replay.replayed"),
              std::to_string(restored["replayed"].get<int64_t>()));
    EXPECT_EQ(root->Attr("agentckpt.replay.pending"),
              std::to_string(restored["pending"].get<int64_t>()));
    const std::pair<const char*, const char*> phases[] = {{"load", "loadMs"},
                                                          {"replay", "replayMs"},
                                                          {"workspace", "workspaceMs"},
                                                          {"prompt", "promptMs"},
                                                          {"resume", "resumeMs"}};
    auto children = ChildrenOf(spans, root->span_id);
    EXPECT_EQ(children.size(), 5u);
    int64_t previous_end = 0;
    for (const auto& [phase, field] : phases) {
      const ReceivedSpan* s = Find(spans, std::string("agentckpt.restore.") + phase, root->span_id);
      ASSERT_NE(s, nullptr) << phase;
      EXPECT_EQ(s->trace_id, trace_id);
      const double reported = restored[field].get<double>();
      EXPECT_LE(std::fabs(s->DurationMs() - reported), 1.0)
          << phase << ": span " << s->DurationMs() << " ms, checkpoint.restored " << reported;
      // The phases follow each other inside the root.
      EXPECT_GE(s->start_ns, root->start_ns) << phase;
      EXPECT_LE(s->end_ns, root->end_ns) << phase;
      if (previous_end != 0) {
        EXPECT_EQ(s->start_ns, previous_end) << phase;
      }
      previous_end = s->end_ns;
    }
    // The root also covers the publication of checkpoint.restored, after the timings.
    EXPECT_GE(root->DurationMs() + 1.0, restored["totalMs"].get<double>());
  }

  OtlpReceiver receiver_;
};

TEST_F(SidecarTracingTest, ARequestsTraceReachesTheWriteTheStoreTheJournalAndTheEvent) {
  auto sidecar = StartSidecar(TracingEnv());
  const std::map<std::string, std::string> traced = {{"traceparent", Traceparent()}};
  HttpReply put =
      HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json"), "", traced);
  ASSERT_EQ(put.status, 200) << put.body;
  HttpReply post = HttpCall(port_, "POST", "/v1/checkpoints", "{}", "", traced);
  ASSERT_EQ(post.status, 201) << post.body;
  json written = json::parse(post.body);

  // checkpoint.created carries the caller's trace in its traceparent header. (The PUT wrote a
  // task_phase_change checkpoint first, in the same trace.)
  json created;
  for (int i = 0; i < 5; ++i) {
    created = NextEventEndingWith(".checkpoint.created");
    if (created.is_null() || created["data"].value("checkpointId", "") == written["checkpointId"]) {
      break;
    }
  }
  ASSERT_FALSE(created.is_null());
  ASSERT_TRUE(created.contains("traceparent")) << created.dump();
  auto header = tracing::ParseTraceparent(created["traceparent"].get<std::string>());
  ASSERT_TRUE(header.has_value()) << created.dump();
  EXPECT_EQ(header->TraceIdHex(), kTrace);

  // Spans are exported in the order they end: the last request's server span comes last.
  Spans spans =
      receiver_.WaitFor([](const Spans& s) { return Find(s, "POST /v1/checkpoints") != nullptr; });
  const ReceivedSpan* server = Find(spans, "POST /v1/checkpoints");
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->trace_id, kTrace);
  EXPECT_EQ(server->parent_span_id, kCallerSpan);
  EXPECT_EQ(server->kind, 2);
  EXPECT_EQ(server->Attr("http.response.status_code"), "201");
  const ReceivedSpan* write = Find(spans, "agentckpt.checkpoint.write", server->span_id);
  ASSERT_NE(write, nullptr);
  EXPECT_EQ(write->trace_id, kTrace);
  EXPECT_EQ(write->Attr("gen_ai.agent.id"), kProcAgent);
  EXPECT_EQ(write->Attr("agentckpt.checkpoint.id"), written["checkpointId"].get<std::string>());
  EXPECT_EQ(write->Attr("agentckpt.checkpoint.sequence"),
            std::to_string(written["sequenceNumber"].get<int64_t>()));
  EXPECT_EQ(write->Attr("agentckpt.trigger"), "manual");
  EXPECT_EQ(write->status_code, 0);
  // The event was published inside the write: its header names the write span.
  EXPECT_EQ(header->SpanIdHex(), write->span_id);
  EXPECT_NE(Find(spans, "agentckpt.store.put", write->span_id), nullptr);
  EXPECT_NE(Find(spans, "agentckpt.store.get_agent", write->span_id), nullptr);

  const ReceivedSpan* put_span = Find(spans, "PUT /v1/context");
  ASSERT_NE(put_span, nullptr);
  EXPECT_EQ(put_span->parent_span_id, kCallerSpan);
  const ReceivedSpan* append = Find(spans, "agentckpt.journal.append", put_span->span_id);
  ASSERT_NE(append, nullptr);
  EXPECT_EQ(append->Attr("agentckpt.journal.durable"), "true");
  EXPECT_NE(Find(spans, "agentckpt.store.append_journal", append->span_id), nullptr);
  // Probes are not traced.
  EXPECT_EQ(Find(spans, "GET /healthz"), nullptr);
  EXPECT_EQ(receiver_.bad_bodies(), 0);
}

TEST_F(SidecarTracingTest, ABadTraceparentIsIgnoredAndStartsANewTrace) {
  auto sidecar = StartSidecar(TracingEnv());
  for (const char* bad : {"garbage", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
                          "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}) {
    HttpReply r = HttpCall(port_, "GET", "/v1/context", "", "", {{"traceparent", bad}});
    EXPECT_EQ(r.status, 200) << bad << ": " << r.body;
  }
  Spans spans = receiver_.WaitFor([](const Spans& s) {
    int n = 0;
    for (const ReceivedSpan& x : s) n += x.name == "GET /v1/context";
    return n == 3;
  });
  int seen = 0;
  for (const ReceivedSpan& s : spans) {
    if (s.name != "GET /v1/context") continue;
    ++seen;
    EXPECT_EQ(s.parent_span_id, "");
    EXPECT_NE(s.trace_id, kTrace);
    EXPECT_NE(s.trace_id, "00000000000000000000000000000000");
  }
  EXPECT_EQ(seen, 3);
}

TEST_F(SidecarTracingTest, RestorePhaseSpansMatchCheckpointRestored) {
  // POST /v1/restore with a traceparent, then a restart's start-up restore (SIGKILL first),
  // restoring from the SQLite store the first process wrote.
  auto sidecar = StartSidecar(TracingEnv());
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
            200);
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", "{}").status, 201);
  ASSERT_TRUE(js_->Publish(std::string("inbox.") + kProcAgent + ".task", "{\"n\":1}").ok());
  const std::string trace = "0af7651916cd43dd8448eb211c80319c";
  HttpReply restore = HttpCall(port_, "POST", "/v1/restore", "", "",
                               {{"traceparent", Traceparent(trace, "b7ad6b7169203331")}});
  ASSERT_EQ(restore.status, 200) << restore.body;
  json restored = NextEventEndingWith(".checkpoint.restored");
  ASSERT_FALSE(restored.is_null());
  EXPECT_EQ(restored["data"].value("traceId", ""), trace);
  ASSERT_TRUE(restored.contains("traceparent"));
  EXPECT_EQ(tracing::ParseTraceparent(restored["traceparent"].get<std::string>())->TraceIdHex(),
            trace);
  EXPECT_EQ(json::parse(restore.body).value("traceId", ""), trace);
  Spans spans =
      receiver_.WaitFor([](const Spans& s) { return Find(s, "POST /v1/restore") != nullptr; });
  const ReceivedSpan* server = Find(spans, "POST /v1/restore");
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->parent_span_id, "b7ad6b7169203331");
  ExpectRestoreSpans(trace, server->span_id, restored["data"]);

  sidecar->Kill();
  auto again = StartSidecar(TracingEnv({{"CKPT_RESTORE_ON_START", "true"}}));
  json at_start = NextEventEndingWith(".checkpoint.restored");
  ASSERT_FALSE(at_start.is_null());
  std::string start_trace = at_start["data"].value("traceId", "");
  ASSERT_EQ(start_trace.size(), 32u) << at_start.dump();
  EXPECT_NE(start_trace, trace);
  // At start nobody called: the restore is the root of its trace.
  ExpectRestoreSpans(start_trace, "", at_start["data"]);
}

TEST_F(SidecarTracingTest, ANatsRestoreRequestsTraceparentHeaderParentsTheRestore) {
  auto sidecar = StartSidecar(TracingEnv());
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
            200);
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", "{}").status, 201);
  const std::string trace = "5b8aa5a2d2c872e8321cf37308d69df2";
  natsMsg* request = nullptr;
  ASSERT_EQ(
      natsMsg_Create(&request, subjects::CheckpointRestore(kProcAgent).c_str(), nullptr, "{}", 2),
      NATS_OK);
  ASSERT_EQ(
      natsMsgHeader_Set(request, "traceparent", Traceparent(trace, "051581bf3cb55c13").c_str()),
      NATS_OK);
  natsMsg* reply = nullptr;
  natsStatus sent = natsConnection_RequestMsg(&reply, events_nc_, request, 20000);
  natsMsg_Destroy(request);
  ASSERT_EQ(sent, NATS_OK);
  json body = json::parse(
      std::string(natsMsg_GetData(reply), static_cast<size_t>(natsMsg_GetDataLength(reply))),
      nullptr, false);
  const char* header = nullptr;
  std::string reply_trace;
  if (natsMsgHeader_Get(reply, "traceparent", &header) == NATS_OK && header != nullptr) {
    if (auto c = tracing::ParseTraceparent(header)) reply_trace = c->TraceIdHex();
  }
  natsMsg_Destroy(reply);
  EXPECT_EQ(body.value("traceId", ""), trace) << body.dump();
  EXPECT_EQ(reply_trace, trace);
  Spans spans = receiver_.WaitFor(
      [](const Spans& s) { return Find(s, "process checkpoint.restore") != nullptr; });
  const ReceivedSpan* consumer = Find(spans, "process checkpoint.restore");
  ASSERT_NE(consumer, nullptr);
  EXPECT_EQ(consumer->trace_id, trace);
  EXPECT_EQ(consumer->parent_span_id, "051581bf3cb55c13");
  EXPECT_EQ(consumer->kind, 5);
  EXPECT_EQ(consumer->Attr("messaging.system"), "nats");
  // The reply carries what checkpoint.restored carries (and the prompt).
  ExpectRestoreSpans(trace, consumer->span_id, body);
}

TEST_F(SidecarTracingTest, LedgerAndGateOperationsHaveSpansAndErrorsAreMarked) {
  auto sidecar = StartSidecar(TracingEnv());
  const std::map<std::string, std::string> traced = {{"traceparent", Traceparent()}};
  HttpReply begin =
      HttpCall(port_, "POST", "/v1/tool-calls/begin",
               R"({"toolName":"search","effect":"read","idempotencyKey":"k-1"})", "", traced);
  ASSERT_EQ(begin.status, 201) << begin.body;
  std::string call_id = json::parse(begin.body)["callId"];
  HttpReply end = HttpCall(port_, "POST", "/v1/tool-calls/" + call_id + "/end",
                           R"({"success":true,"outputSummary":"3 hits"})", "", traced);
  ASSERT_EQ(end.status, 200) << end.body;
  HttpReply unknown =
      HttpCall(port_, "POST", "/v1/tool-calls/no-such-call/end", R"({"success":true})", "", traced);
  ASSERT_EQ(unknown.status, 404) << unknown.body;
  HttpReply gate = HttpCall(port_, "POST", "/v1/gates",
                            R"({"gateId":"g-1","reason":"deploy to production"})", "", traced);
  ASSERT_EQ(gate.status, 201) << gate.body;
  HttpReply resolved = HttpCall(port_, "POST", "/v1/gates/g-1/resolve",
                                R"({"decision":"approved","by":"alice"})", "", traced);
  ASSERT_EQ(resolved.status, 200) << resolved.body;

  // Spans are exported in the order they end: the last request's server span comes last.
  Spans spans = receiver_.WaitFor(
      [](const Spans& s) { return Find(s, "POST /v1/gates/{gateId}/resolve") != nullptr; });
  auto under_server = [&](const std::string& span_name, const std::string& server_name) {
    const ReceivedSpan* server = nullptr;
    for (const ReceivedSpan& s : spans) {
      if (s.name == server_name && s.parent_span_id == kCallerSpan) {
        if (const ReceivedSpan* child = Find(spans, span_name, s.span_id)) server = child;
      }
    }
    return server;
  };
  const ReceivedSpan* b = under_server("agentckpt.ledger.begin", "POST /v1/tool-calls/begin");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->Attr("gen_ai.tool.call.id"), call_id);
  EXPECT_EQ(b->status_code, 0);
  const ReceivedSpan* ok_end = nullptr;
  const ReceivedSpan* bad_end = nullptr;
  for (const ReceivedSpan& s : spans) {
    if (s.name != "agentckpt.ledger.end") continue;
    (s.Attr("gen_ai.tool.call.id") == call_id ? ok_end : bad_end) = &s;
  }
  ASSERT_NE(ok_end, nullptr);
  ASSERT_NE(bad_end, nullptr);
  EXPECT_EQ(ok_end->status_code, 0);
  EXPECT_EQ(bad_end->status_code, 2);
  EXPECT_EQ(bad_end->Attr("gen_ai.tool.call.id"), "no-such-call");
  // The 404 is the caller's mistake: an error of the ledger operation, not of the server.
  const ReceivedSpan* bad_server = Find(spans, "POST /v1/tool-calls/{callId}/end");
  ASSERT_NE(bad_server, nullptr);
  const ReceivedSpan* request = under_server("agentckpt.gate.request", "POST /v1/gates");
  ASSERT_NE(request, nullptr);
  EXPECT_EQ(request->Attr("agentckpt.gate.id"), "g-1");
  EXPECT_EQ(request->Attr("agentckpt.gate.state"), "pending");
  // A new gate is checkpointed before the reply, inside the gate's span.
  EXPECT_NE(Find(spans, "agentckpt.checkpoint.write", request->span_id), nullptr);
  const ReceivedSpan* resolve =
      under_server("agentckpt.gate.resolve", "POST /v1/gates/{gateId}/resolve");
  ASSERT_NE(resolve, nullptr);
  EXPECT_EQ(resolve->Attr("agentckpt.gate.state"), "approved");
  for (const ReceivedSpan& s : spans) {
    if (s.name.rfind("agentckpt.", 0) == 0) {
      EXPECT_EQ(s.trace_id, kTrace) << s.name;
    }
  }
}

TEST_F(SidecarTracingTest, SigtermDoesNotWaitOnACollectorThatNeverAnswers) {
  receiver_.Stall();
  // The export alone would wait ten minutes; CKPT_SHUTDOWN_BUDGET_S's watchdog would exit 1.
  auto sidecar = StartSidecar(TracingEnv({{"OTEL_EXPORTER_OTLP_TIMEOUT", "600000"}}));
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
            200);
  // The first batch is held at the collector; requests are answered all the same.
  receiver_.WaitFor([](const Spans& s) { return !s.empty(); });
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", "{}").status, 201);
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(sidecar->Signal(SIGTERM, 20000), 0) << sidecar->Stdout();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(15));
  EXPECT_NE(sidecar->Stdout().find("pre_shutdown checkpoint saved"), std::string::npos);
}

}  // namespace
}  // namespace agentckpt::testing
