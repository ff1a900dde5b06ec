// Benchmark of the running sidecar (the real `agentckpt run` process, a real nats-server with the
// agent's JetStream consumer, the default SQLite store):
//   1. POST /v1/checkpoints over localhost until 201, with the 16k reference fixture as the
//      context: latency p50/p99/max over N calls (default 1,000), client side and as reported
//      by the sidecar (durationMs).
//      The same from a Node client (node_checkpoint_client.mjs, keep-alive: fetch, then node:http)
//      when node is on PATH. After each client, where the sidecar's time went: how many checkpoints
//      and how many store puts (SQLite commit + fsync) took over 1 ms and over 2.5 ms (from
//      /metrics). Then the Node client's GET /healthz through the same transport (no store
//      work): the client's own share of a round trip. Each Node client is timed twice: in its
//      first calls (a fresh process, whose JIT compiler is still at work on the client's and
//      undici's code and competes with the sidecar for the cores) and after 5,000 calls (the
//      steady state of a long-running agent); node_checkpoint_client.mjs says why. For each window
//      the client also reports its own GC pauses inside its round trips. After each
//      Node client, the same client against a zero-work server (client_floor.h): what the client
//      and the transport cost by themselves, in the same run.
//   2. Idle: resident set size and CPU time used over a few seconds with no requests.
// Usage: sidecar_http_bench [calls] [idle_seconds]
// AGENTCKPT_BENCH_NODE_FLAGS passes node flags to the Node client (client_floor.h); the report
// names them next to the client's version.
#include <cpprest/http_client.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/process_stats.h"
#include "bench/sidecar/client_floor.h"
#include "tests/sidecar/sidecar_process.h"
#include "tests/support/jetstream_fixture.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace {

using agentckpt::bench::ResidentSetKb;
using agentckpt::testing::FixtureContextBody;
using agentckpt::testing::HttpCall;
using agentckpt::testing::JetStreamTestClient;
using agentckpt::testing::NatsServerProcess;
using agentckpt::testing::PickFreePort;
using agentckpt::testing::SidecarProcess;
using agentckpt::testing::TempDir;

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// The client's round trips and the sidecar's own durationMs: p50, p99 and max.
void PrintLatencies(const std::vector<double>& client_ms, const std::vector<double>& server_ms) {
  std::printf("  client round trip: p50 %.3f ms  p99 %.3f ms  max %.3f ms\n",
              Percentile(client_ms, 0.50), Percentile(client_ms, 0.99),
              *std::max_element(client_ms.begin(), client_ms.end()));
  std::printf("  sidecar durationMs: p50 %.3f ms  p99 %.3f ms  max %.3f ms\n",
              Percentile(server_ms, 0.50), Percentile(server_ms, 0.99),
              *std::max_element(server_ms.begin(), server_ms.end()));
}

// utime + stime of the process, in clock ticks.
long CpuTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream rest(all.substr(all.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::atol(field.c_str());
    if (i == 15) stime = std::atol(field.c_str());
  }
  return utime + stime;
}

// Cumulative counts of one histogram of the sidecar's /metrics (by `le` bound, "+Inf" last).
std::vector<std::pair<std::string, double>> HistogramBuckets(int port, const std::string& name,
                                                             const std::string& label) {
  std::vector<std::pair<std::string, double>> buckets;
  std::istringstream in(HttpCall(port, "GET", "/metrics", "").body);
  const std::string prefix = name + "_bucket{" + label;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    size_t le = line.find("le=\"");
    size_t end = line.find('"', le + 4);
    size_t space = line.rfind(' ');
    if (le == std::string::npos || end == std::string::npos || space == std::string::npos) continue;
    buckets.emplace_back(line.substr(le + 4, end - le - 4), std::atof(line.c_str() + space + 1));
  }
  return buckets;
}

// Where the sidecar's time went during one client's calls (warm-up included): how many
// checkpoints, and how many store puts (the SQLite commit with its fsync), took more than 1 ms
// and more than 2.5 ms, from the difference of the sidecar's histograms read before and after.
struct TimeSplit {
  std::vector<std::pair<std::string, double>> checkpoint, put;
  static TimeSplit Read(int port) {
    return {
        HistogramBuckets(port, "agentckpt_checkpoint_duration_seconds", "trigger=\"manual\""),
        HistogramBuckets(port, "agentckpt_store_operation_duration_seconds", "operation=\"put\"")};
  }
  static double Over(const std::vector<std::pair<std::string, double>>& after,
                     const std::vector<std::pair<std::string, double>>& before, double bound) {
    double total = 0, under = 0;
    for (size_t i = 0; i < after.size(); ++i) {
      double d = after[i].second - (i < before.size() ? before[i].second : 0);
      if (after[i].first == "+Inf") total = d;
      if (after[i].first != "+Inf" &&
          std::fabs(std::atof(after[i].first.c_str()) - bound) < 1e-12) {
        under = d;
      }
    }
    return total - under;
  }
  void PrintSince(const TimeSplit& before) const {
    std::printf(
        "  sidecar split: checkpoints over 1 ms %.0f, over 2.5 ms %.0f; store puts over "
        "1 ms %.0f, over 2.5 ms %.0f\n",
        Over(checkpoint, before.checkpoint, 0.001), Over(checkpoint, before.checkpoint, 0.0025),
        Over(put, before.put, 0.001), Over(put, before.put, 0.0025));
  }
};

// How much of a window's tail the client's own garbage collector explains: how many POSTs had one
// of the client's GC pauses inside their round trip, how many of the calls over 5 ms did, and the
// p99 of the calls with none (a diagnostic, not a target figure: it leaves calls out).
void PrintClientGc(const std::vector<double>& client_ms, const std::vector<double>& gc_ms) {
  if (gc_ms.size() != client_ms.size()) return;
  size_t with_gc = 0, over = 0, over_with_gc = 0;
  std::vector<double> without_gc;
  for (size_t i = 0; i < client_ms.size(); ++i) {
    bool gc = gc_ms[i] > 0;
    with_gc += gc ? 1 : 0;
    over += client_ms[i] > 5.0 ? 1 : 0;
    over_with_gc += (client_ms[i] > 5.0 && gc) ? 1 : 0;
    if (!gc) without_gc.push_back(client_ms[i]);
  }
  std::printf(
      "  the client's own GC pauses: inside %zu of the %zu round trips; %zu of the %zu over 5 ms "
      "had one inside; p99 of the round trips with none: %.3f ms\n",
      with_gc, client_ms.size(), over_with_gc, over,
      without_gc.empty() ? 0.0 : Percentile(without_gc, 0.99));
}

// One window of the Node client's output: its POST round trips, the sidecar's durationMs of
// each, the client's GC pauses inside them, and the same client's GET /healthz round trips.
void PrintNodeWindow(const nlohmann::json& w) {
  std::vector<double> client_ms = w["clientMs"].get<std::vector<double>>();
  PrintLatencies(client_ms, w["serverMs"].get<std::vector<double>>());
  if (w.contains("clientGcMs"))
    PrintClientGc(client_ms, w["clientGcMs"].get<std::vector<double>>());
  if (w.contains("healthzMs") && !w["healthzMs"].empty()) {
    std::vector<double> healthz = w["healthzMs"].get<std::vector<double>>();
    std::printf(
        "  the same client's GET /healthz (no store work), %zu calls: p50 %.3f ms  "
        "p99 %.3f ms  max %.3f ms\n",
        healthz.size(), Percentile(healthz, 0.50), Percentile(healthz, 0.99),
        *std::max_element(healthz.begin(), healthz.end()));
  }
}

// One line of client round trips only (the zero-work server reports no durationMs).
void PrintClientOnly(const char* what, const nlohmann::json& ms_json) {
  std::vector<double> ms = ms_json.get<std::vector<double>>();
  if (ms.empty()) return;
  std::printf("  %s round trip: p50 %.3f ms  p99 %.3f ms  max %.3f ms\n", what,
              Percentile(ms, 0.50), Percentile(ms, 0.99), *std::max_element(ms.begin(), ms.end()));
}

// One idle line: the resident set and, when there was an idle window, the CPU used over it.
void PrintIdle(const char* what, long rss_kb, double cpu_s, int idle_s) {
  if (idle_s <= 0) {
    std::printf("%s: RSS %.1f MB, CPU not measured (0 idle seconds)\n", what,
                static_cast<double>(rss_kb) / 1024.0);
    return;
  }
  std::printf("%s: RSS %.1f MB, CPU %.3f s over %d s (%.2f%%)\n", what,
              static_cast<double>(rss_kb) / 1024.0, cpu_s, idle_s, 100.0 * cpu_s / idle_s);
}

}  // namespace

int main(int argc, char** argv) {
  int calls = argc > 1 ? std::atoi(argv[1]) : 1000;
  int idle_s = argc > 2 ? std::atoi(argv[2]) : 5;
  setenv("AGENTCKPT_BIN", AGENTCKPT_BIN_DEFAULT, 0);

  NatsServerProcess nats;
  auto js = JetStreamTestClient::Connect(nats.url());
  if (!js.ok() || !(*js)->CreateStream("INBOX", {"inbox.>"}).ok() ||
      !(*js)->CreateDurablePullConsumer("INBOX", "agent", "inbox.bench-agent.>").ok() ||
      !(*js)->PublishN("inbox.bench-agent.task", 20, "m").ok() ||
      !(*js)->FetchAndAckThrough("INBOX", "agent", 12).ok()) {
    std::fprintf(stderr, "JetStream setup failed\n");
    return 1;
  }
  TempDir dir;
  int port = PickFreePort();
  SidecarProcess sidecar({{"AGENT_ID", "bench-agent"},
                          {"NATS_URL", nats.url()},
                          {"CKPT_STORE", "sqlite://" + dir.File("store.db")},
                          {"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(port)},
                          {"JS_STREAM", "INBOX"},
                          {"JS_CONSUMER", "agent"},
                          {"CKPT_LOG_LEVEL", "warn"}},
                         dir.path());
  if (!sidecar.WaitHealthy(port)) {
    std::fprintf(stderr, "sidecar did not start:\n%s\n", sidecar.Stderr().c_str());
    return 1;
  }
  if (HttpCall(port, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status !=
      200) {
    std::fprintf(stderr, "PUT /v1/context failed\n");
    return 1;
  }

  TimeSplit split_start = TimeSplit::Read(port);
  web::http::client::http_client client("http://127.0.0.1:" + std::to_string(port));
  std::vector<double> client_ms, server_ms;
  int64_t size = 0;
  std::string last_reply;  // the sidecar's last checkpoint reply, for the zero-work server
  for (int i = 0; i < calls + 20; ++i) {  // the first 20 warm up and are not counted
    web::http::http_request req(web::http::methods::POST);
    req.set_request_uri("/v1/checkpoints");
    req.set_body(std::string(R"({"trigger":"manual"})"), "application/json");
    auto start = std::chrono::steady_clock::now();
    web::http::http_response resp = client.request(req).get();
    std::string body = resp.extract_utf8string(true).get();
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (resp.status_code() != 201) {
      std::fprintf(stderr, "call %d: HTTP %d %s\n", i, resp.status_code(), body.c_str());
      return 1;
    }
    if (i < 20) continue;
    last_reply = body;
    auto j = nlohmann::json::parse(body);
    client_ms.push_back(ms);
    server_ms.push_back(j["durationMs"].get<double>());
    size = j["sizeBytes"].get<int64_t>();
  }
  std::printf("POST /v1/checkpoints -> 201, 16k fixture (checkpoint %lld bytes), %d calls\n",
              static_cast<long long>(size), calls);
  PrintLatencies(client_ms, server_ms);
  TimeSplit split_cpp = TimeSplit::Read(port);
  split_cpp.PrintSince(split_start);

  // The same from a Node client, when node is on PATH: first with fetch (undici), then with
  // node:http on a keep-alive agent (the TypeScript client's transport for http://). After each,
  // the same client against a zero-work server answering the sidecar's own replies at once
  // (client_floor.h): the client's and the transport's share of a round trip, measured in the
  // same run.
  agentckpt::bench::ZeroWorkServer zero(last_reply, HttpCall(port, "GET", "/healthz", "").body);
  bool zero_up = zero.Start();
  TimeSplit split_prev = split_cpp;
  for (const char* transport : {"fetch", "http"}) {
    std::string why;
    auto j = agentckpt::bench::RunNodeClient(AGENTCKPT_BENCH_DIR, port, calls, transport, &why);
    if (!j) {
      std::printf("node client (%s): not run (%s)\n", transport, why.c_str());
      continue;
    }
    const char* name = std::string(transport) == "fetch" ? "fetch" : "node:http";
    std::string node = j->value("node", std::string("node ?"));
    if (j->contains("execArgv") && !(*j)["execArgv"].empty()) {
      node += ", node flags";
      for (const auto& flag : (*j)["execArgv"]) node += " " + flag.get<std::string>();
      node += ": not Node's defaults";
    }
    std::printf(
        "Node client (%s), %s (keep-alive), %d calls after 20 warm-up calls (a fresh process)\n",
        node.c_str(), name, calls);
    PrintNodeWindow(*j);
    if (j->contains("steady")) {
      std::printf(
          "Node client (%s), %s (keep-alive), %d calls after %d calls of the same process "
          "(steady state)\n",
          node.c_str(), name, calls, j->value("steadyAfter", 0));
      PrintNodeWindow((*j)["steady"]);
    }
    TimeSplit split_node = TimeSplit::Read(port);
    std::printf("  (over all of this client's calls)\n");
    split_node.PrintSince(split_prev);
    split_prev = split_node;
    if (!zero_up) continue;
    auto z =
        agentckpt::bench::RunNodeClient(AGENTCKPT_BENCH_DIR, zero.port(), calls, transport, &why);
    if (!z) {
      std::printf("node client (%s) against the zero-work server: not run (%s)\n", transport,
                  why.c_str());
      continue;
    }
    std::printf(
        "The same Node client, %s, against a zero-work server (the sidecar's HTTP server "
        "answering its captured replies at once: no store, no NATS), %d calls each\n",
        name, calls);
    PrintClientOnly("fresh process, POST /v1/checkpoints", (*z)["clientMs"]);
    PrintClientOnly("fresh process, GET /healthz", (*z)["healthzMs"]);
    if (z->contains("steady")) {
      PrintClientOnly("steady state, POST /v1/checkpoints", (*z)["steady"]["clientMs"]);
      PrintClientOnly("steady state, GET /healthz", (*z)["steady"]["healthzMs"]);
    }
  }

  std::this_thread::sleep_for(std::chrono::seconds(1));
  long ticks_before = CpuTicks(sidecar.pid());
  std::this_thread::sleep_for(std::chrono::seconds(idle_s));
  long ticks_after = CpuTicks(sidecar.pid());
  double cpu_s =
      static_cast<double>(ticks_after - ticks_before) / static_cast<double>(sysconf(_SC_CLK_TCK));
  PrintIdle("idle after the run", ResidentSetKb(sidecar.pid()), cpu_s, idle_s);

  // A fresh sidecar that has only started (no context yet), for the idle baseline.
  int port2 = PickFreePort();
  SidecarProcess fresh({{"AGENT_ID", "bench-idle"},
                        {"NATS_URL", nats.url()},
                        {"CKPT_STORE", "sqlite://" + dir.File("idle.db")},
                        {"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(port2)},
                        {"CKPT_LOG_LEVEL", "warn"}},
                       dir.path());
  if (fresh.WaitHealthy(port2)) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    long t0 = CpuTicks(fresh.pid());
    std::this_thread::sleep_for(std::chrono::seconds(idle_s));
    long t1 = CpuTicks(fresh.pid());
    double s = static_cast<double>(t1 - t0) / static_cast<double>(sysconf(_SC_CLK_TCK));
    PrintIdle("idle fresh sidecar", ResidentSetKb(fresh.pid()), s, idle_s);
  }
  fresh.Signal(SIGTERM);
  sidecar.Signal(SIGTERM);
  return 0;
}
