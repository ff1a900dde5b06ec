// The journal's figures, side by side in one run on one machine (docs/journal.md):
//   1. PATCH /v1/context (a ~1 KB merge patch) and POST /v1/tool-calls: durable round trips
//      (CKPT_DURABILITY=sync, SQLite) over localhost from two C++ clients, each on one kept-alive
//      connection: a plain synchronous Boost.Beast client and cpprestsdk's http_client.
//   2. The store append alone (SqliteStore::AppendJournal, one 1 KB entry) against the disk's
//      fsync floor (write 4 KB + fsync on a file in the same directory) and a bare SQLite append of
//      the same size (SQLite's own minimum), measured in alternation (append_vs_floor.h).
//   3. 8 concurrent clients sending PATCHes in sync mode: durable updates per second (each
//      client kind in turn).
//   4. Restore (Restorer, no replay) with a 1,000-entry journal tail: totalMs.
//   5. The tool-call ledger (docs/tool-call-ledger.md), same sidecar as 1: POST
//      /v1/tool-calls/begin and /end round trips (durable), and a begin that finds a completed
//      key (a replay: checked to write nothing to the store).
// Usage: journal_bench [calls] [dir]   (dir: where the store files go; default a temp dir)
#include <cpprest/http_client.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/cpu_reference.h"
#include "bench/common/journal_tail.h"
#include "bench/common/keepalive_client.h"
#include "bench/common/percentiles.h"
#include "bench/sidecar/append_vs_floor.h"
#include "checkpoint/canonical.h"
#include "restore/restorer.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/sidecar/sidecar_process.h"
#include "tests/support/fixtures.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace {

using agentckpt::bench::AppendFigures;
using agentckpt::bench::CountSlowTogether;
using agentckpt::bench::CpuReferenceMicros;
using agentckpt::bench::DraftText;
using agentckpt::bench::Latencies;
using agentckpt::bench::MakeJournalTail;
using agentckpt::bench::MeasureAppendVsFloor;
using agentckpt::bench::MicrosSince;
using agentckpt::bench::PrintAppendFigures;
using agentckpt::bench::SlowTogether;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace http = web::http;

// One request; the reply's JSON (null on failure, reported).
json Call(http::client::http_client& c, const http::method& m, const std::string& path,
          const std::string& body) {
  http::http_request req(m);
  req.set_request_uri(path);
  req.set_body(body, "application/json");
  http::http_response resp;
  std::string text;
  try {
    resp = c.request(req).get();
    text = resp.extract_utf8string(true).get();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s %s: %s\n", m.c_str(), path.c_str(), e.what());
    return nullptr;
  }
  if (resp.status_code() / 100 != 2) {
    std::fprintf(stderr, "%s %s: HTTP %d %s\n", m.c_str(), path.c_str(), resp.status_code(),
                 text.c_str());
    return nullptr;
  }
  return json::parse(text, nullptr, false);
}

json Call(agentckpt::bench::KeepAliveClient& c, const std::string& m, const std::string& path,
          const std::string& body) {
  agentckpt::bench::KeepAliveReply r = c.Call(m, path, body);
  if (r.status / 100 != 2) {
    std::fprintf(stderr, "%s %s: HTTP %d %s\n", m.c_str(), path.c_str(), r.status, r.body.c_str());
    return nullptr;
  }
  return json::parse(r.body, nullptr, false);
}

std::string PatchBody(int i) {
  return json{{"contextSummary", {{"completedSteps", i}, {"draftContent", DraftText(i, 1000)}}}}
      .dump();
}

std::string ToolCallBody(int i) {
  return json{{"toolName", "search"},
              {"timestamp", "2026-01-01T00:00:00.000Z"},
              {"inputSummary", DraftText(i, 150)},
              {"outputSummary", DraftText(i, 400)},
              {"durationMs", 12},
              {"success", true}}
      .dump();
}

bool Durable(const json& j) { return j.is_object() && j.value("durable", false); }

}  // namespace

int main(int argc, char** argv) {
  using namespace agentckpt;
  using namespace agentckpt::testing;
  const int calls = argc > 1 ? std::atoi(argv[1]) : 2000;
  TempDir tmp;
  const std::string dir = argc > 2 ? argv[2] : tmp.path();
  setenv("AGENTCKPT_BIN", AGENTCKPT_BIN_DEFAULT, 0);
  std::printf("journal bench: %d calls per figure, store files in %s\n", calls, dir.c_str());
  std::fflush(stdout);

  // 1. Durable round trips.
  NatsServerProcess nats;
  int port = PickFreePort();
  SidecarProcess sidecar({{"AGENT_ID", "bench-journal"},
                          {"NATS_URL", nats.url()},
                          {"CKPT_STORE", "sqlite://" + dir + "/sidecar.db"},
                          {"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(port)},
                          {"CKPT_LOG_LEVEL", "warn"}},
                         dir);
  if (!sidecar.WaitHealthy(port)) {
    std::fprintf(stderr, "sidecar did not start:\n%s\n", sidecar.Stderr().c_str());
    return 1;
  }
  for (int i = 0; i < 200 && HttpCall(port, "GET", "/readyz").status != 200; ++i) usleep(50000);
  if (HttpCall(port, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status !=
      200) {
    std::fprintf(stderr, "PUT /v1/context failed\n");
    return 1;
  }
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  http::client::http_client rest_client(base);
  agentckpt::bench::KeepAliveClient beast_client(port);
  // The same calls from each client kind; `call(kind, method, path, body)` sends one.
  auto call = [&](int kind, const std::string& m, const std::string& path,
                  const std::string& body) -> json {
    if (kind == 0) return Call(beast_client, m, path, body);
    return Call(rest_client, http::method(m), path, body);
  };
  const char* kClientNames[] = {"Boost.Beast sync client", "cpprestsdk http_client"};
  // Warm-up: 500 PATCHes, untimed. The sidecar grows its SQLite WAL to the steady size when it
  // opens the store (SqliteStoreOptions::presize_wal), so commits overwrite blocks already
  // written from the first one on; the WAL's size before and after the warm-up shows it.
  int step = 0;
  {
    auto wal_size = [&] {
      struct stat st {};
      return ::stat((dir + "/sidecar.db-wal").c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size)
                                                                 : 0;
    };
    const int64_t before = wal_size();
    for (int i = 0; i < 500; ++i) {
      if (!Durable(call(0, "PATCH", "/v1/context", PatchBody(step++)))) return 1;
    }
    std::printf(
        "\nwarm-up: 500 PATCHes; the sidecar's WAL file was %.1f MB before them, %.1f MB after\n",
        static_cast<double>(before) / 1e6, static_cast<double>(wal_size()) / 1e6);
  }
  std::printf(
      "\n[1] durable round trip, sync, SQLite, 1 C++ client on one keep-alive connection, "
      "localhost, a sidecar started on a new store file\n");
  // The two clients take turns call by call, so both see the same disk and machine. Each body is
  // built before the clock starts.
  Latencies patch[2], tool[2];
  for (int i = 0; i < calls + 50; ++i) {
    for (int kind = 0; kind < 2; ++kind) {
      const std::string body = PatchBody(step++);
      auto start = Clock::now();
      json r = call(kind, "PATCH", "/v1/context", body);
      double us = MicrosSince(start);
      if (!Durable(r)) return 1;
      if (i >= 50) patch[kind].Add(us);
    }
  }
  for (int i = 0; i < calls + 50; ++i) {
    for (int kind = 0; kind < 2; ++kind) {
      const std::string body = ToolCallBody(step++);
      auto start = Clock::now();
      json r = call(kind, "POST", "/v1/tool-calls", body);
      double us = MicrosSince(start);
      if (!Durable(r)) return 1;
      if (i >= 50) tool[kind].Add(us);
    }
  }
  for (int kind = 0; kind < 2; ++kind) {
    patch[kind].Print(std::string("PATCH /v1/context (~1 KB), ") + kClientNames[kind]);
  }
  for (int kind = 0; kind < 2; ++kind) {
    tool[kind].Print(std::string("POST /v1/tool-calls, ") + kClientNames[kind]);
  }

  // 5. The ledger: begin and end, then begins that replay completed keys.
  Latencies begin, end, replay;
  int64_t last_sequence = 0;
  for (int i = 0; i < calls + 50; ++i) {
    const std::string key = "bench-key-" + std::to_string(i);
    const std::string begin_body = json{
        {"toolName", "refund"},
        {"effect", "write"},
        {"idempotencyKey", key},
        {"inputSummary",
         DraftText(i, 150)}}.dump();
    const std::string end_body =
        json{{"success", true}, {"outputSummary", DraftText(i, 400)}, {"durationMs", 12}}.dump();
    auto start = Clock::now();
    json b = call(0, "POST", "/v1/tool-calls/begin", begin_body);
    double us = MicrosSince(start);
    if (!Durable(b)) return 1;
    if (i >= 50) begin.Add(us);
    start = Clock::now();
    json e = call(0, "POST", "/v1/tool-calls/" + b["callId"].get<std::string>() + "/end", end_body);
    us = MicrosSince(start);
    if (!Durable(e)) return 1;
    if (i >= 50) end.Add(us);
    last_sequence = e["journalSequence"].get<int64_t>();
  }
  for (int i = 0; i < calls + 50; ++i) {
    // Keys among the newest 500 (CKPT_LEDGER_KEEP keeps 1,000).
    const int kept = std::min(calls + 50, 500);
    const std::string key = "bench-key-" + std::to_string(calls + 49 - i % kept);
    const std::string body =
        json{{"toolName", "refund"}, {"effect", "write"}, {"idempotencyKey", key}}.dump();
    auto start = Clock::now();
    json b = call(0, "POST", "/v1/tool-calls/begin", body);
    double us = MicrosSince(start);
    if (!b.is_object() || !b.value("replayed", false)) return 1;
    if (i >= 50) replay.Add(us);
  }
  json after = call(0, "PATCH", "/v1/context", PatchBody(calls + 100));
  if (!Durable(after) || after["journalSequence"].get<int64_t>() != last_sequence + 1) {
    std::fprintf(stderr, "a replayed begin wrote to the journal (sequence %s after %lld)\n",
                 after.dump().c_str(), static_cast<long long>(last_sequence));
    return 1;
  }
  std::printf(
      "\n[5] tool-call ledger, durable round trip, sync, SQLite, Boost.Beast sync client, "
      "localhost "
      "(CKPT_LEDGER_KEEP 1000)\n");
  begin.Print("POST /v1/tool-calls/begin (new key)");
  end.Print("POST /v1/tool-calls/{id}/end");
  replay.Print("begin of a completed key (replay)");
  std::printf("%-40s %d replays, 0 journal entries written\n", "replay store writes", calls + 50);

  // 3. Eight concurrent clients (same sidecar), each client kind in turn.
  constexpr int kClients = 8;
  const int per_client = calls / 2;
  std::printf("\n[3] %d concurrent clients, sync, SQLite, PATCH ~1 KB, %d each\n", kClients,
              per_client);
  for (int kind = 0; kind < 2; ++kind) {
    std::atomic<int> durable{0}, failed{0};
    // Each client has its connection and its bodies ready before the clock starts; all start
    // together.
    std::latch ready(kClients + 1), go(1);
    std::vector<std::thread> threads;
    for (int t = 0; t < kClients; ++t) {
      threads.emplace_back([&, t] {
        http::client::http_client rc(base);
        agentckpt::bench::KeepAliveClient bc(port);
        std::vector<std::string> bodies;
        for (int i = 0; i < per_client; ++i) {
          bodies.push_back(PatchBody((kind * 10 + t) * 100000 + i));
        }
        ready.count_down();
        go.wait();
        for (const std::string& body : bodies) {
          json r = kind == 0 ? Call(bc, "PATCH", "/v1/context", body)
                             : Call(rc, http::methods::PATCH, "/v1/context", body);
          (Durable(r) ? durable : failed)++;
        }
      });
    }
    ready.arrive_and_wait();
    auto start8 = Clock::now();
    go.count_down();
    for (auto& th : threads) th.join();
    double seconds = MicrosSince(start8) / 1e6;
    std::printf("%-40s %d durable updates in %.2f s = %.0f updates/s (failed %d)\n",
                (std::string("throughput, ") + kClientNames[kind]).c_str(), durable.load(), seconds,
                durable.load() / seconds, failed.load());
  }
  sidecar.Signal(SIGTERM);

  // 2. The store append alone vs the fsync floor and a bare SQLite append (append_vs_floor.h).
  AppendFigures appends;
  if (!MeasureAppendVsFloor(dir, calls,
                            json{{"contextSummary", {{"draftContent", DraftText(0, 1000)}}}}.dump(),
                            &appends)) {
    return 1;
  }
  PrintAppendFigures(&appends);

  // 4. Restore with a 1,000-entry tail.
  {
    auto store = SqliteStore::Open(dir + "/restore.db");
    if (!store.ok()) return 1;
    const std::string agent = "bench-restore";
    // A checkpoint taken now: the fixture's fixed timestamp is past its 7-day expireAt, and an
    // expired checkpoint is never restored (the fold would not run).
    Checkpoint cp = MakeCheckpoint(agent, 1);
    cp.timestamp_ms = Env::Default()->NowUnixMillis();
    auto sealed = Seal(std::move(cp));
    if (!sealed.ok() || !(*store)->Put(*sealed, PutOptions{}).ok()) return 1;
    std::vector<JournalEntry> tail = MakeJournalTail(agent, 1000, 1000);
    if (!(*store)->AppendJournal(agent, tail, std::nullopt).ok()) return 1;
    RestoreOptions ro;
    ro.dry_run = true;
    Restorer restorer(Env::Default(), store->get(), nullptr, nullptr, ro);
    Latencies total;
    // The CPU reference (bench/common/cpu_reference.h) before the first kept restore and after
    // each: which slow restores were slow moments of the machine.
    std::vector<double> kept, reference;
    int applied = 0;
    for (int i = 0; i < 120; ++i) {
      if (i == 20) reference.push_back(CpuReferenceMicros());
      auto r = restorer.Run(agent);
      if (!r.ok()) return 1;
      applied = r->journal.value("applied", 0);
      if (applied != 1000) {
        std::fprintf(stderr, "restore folded %d of 1000 journal entries: %s\n", applied,
                     r->journal.dump().c_str());
        return 1;
      }
      if (i >= 20) {
        total.Add(r->timings.total_ms * 1000);
        kept.push_back(r->timings.total_ms * 1000);
        reference.push_back(CpuReferenceMicros());
      }
    }
    std::printf(
        "\n[4] restore (Restorer, dry run, no replay) of a checkpoint + 1,000-entry tail "
        "(~1 KB patches; %d applied)\n",
        applied);
    total.Print("restore totalMs");
    Latencies cpu;
    for (double v : reference) cpu.Add(v);
    cpu.Print("CPU reference (fixed register loop)");
    SlowTogether slow = CountSlowTogether(kept, reference, 2.0);
    std::printf(
        "%-40s %d restores over 2x the restore p50, %d of them next to a CPU reference "
        "over 2x its p50 (the machine's slow moments)\n",
        "slow restores", slow.slow_samples, slow.with_slow_reference);
  }
  return 0;
}
