// Fleet view speed (docs/console.md "Performance"): fills a SQLite store with AGENTS agents x
// CHECKPOINTS checkpoints of the 16 KB reference fixture (each agent also with a 4-entry journal
// tail that the fleet folds, as restore does), serves it with the console's handler on the
// http/ server, and measures GET /api/fleet (keep-alive, with the bearer token) and, with
// --page, the fleet page's load in headless chromium until every row is drawn
// (fleet_page.mjs, puppeteer-core from tests/console/node_modules).
//
//   build/bin/console_bench [--agents 1000] [--checkpoints 48] [--iterations 50] [--dir DIR]
//                           [--page] [--fleet-cache-ms 30000] [--churn N]
//
// --fleet-cache-ms is the console's setting of that name (console/fleet_cache.h; 0: every row
// computed on every request). --churn N appends a journal entry to N agents before each
// request (live agents; those rows are computed again), on a copy of the store.
// The store file DIR/fleet-AGENTSxCHECKPOINTS.db is kept and reused by later runs.
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/common/keepalive_client.h"
#include "bench/common/percentiles.h"
#include "checkpoint/checkpoint_json.h"
#include "common/env.h"
#include "common/ids.h"
#include "common/status_macros.h"
#include "console/console_api.h"
#include "http/http_server.h"
#include "journal/journal_entry.h"
#include "store/checkpoint_store.h"

namespace agentckpt::bench {
namespace {

constexpr char kToken[] = "bench-token";

int Fail(const Status& s) {
  std::fprintf(stderr, "console_bench: %s\n", s.ToString().c_str());
  return 1;
}

Status Fill(CheckpointStore* store, const Checkpoint& base, int agents, int checkpoints) {
  const int64_t now = Env::Default()->NowUnixMillis();
  for (int a = 0; a < agents; ++a) {
    char id[32];
    std::snprintf(id, sizeof(id), "agent-%04d", a);
    for (int s = 1; s <= checkpoints; ++s) {
      Checkpoint cp = base;
      cp.agent_id = id;
      cp.sequence_number = s;
      cp.checkpoint_id = *NewUuidV4(Env::Default());
      cp.timestamp_ms = now - static_cast<int64_t>(checkpoints - s) * 60000;
      cp.journal = JournalPosition{0, kJournalGenesisSha256};
      auto sealed = Seal(std::move(cp));
      if (!sealed.ok()) return sealed.status();
      auto put = store->Put(*sealed, PutOptions{checkpoints});
      if (!put.ok()) return put.status();
    }
    std::vector<JournalEntry> tail;
    std::string prev = kJournalGenesisSha256;
    for (int i = 1; i <= 4; ++i) {
      JournalEntry e;
      e.agent_id = id;
      e.sequence = i;
      e.kind = JournalKind::kContextPatch;
      e.payload = "{\"contextSummary\":{\"completedSteps\":" + std::to_string(i) + "}}";
      e.timestamp_ms = now;
      e.prev_sha256 = prev;
      SealJournalEntry(&e);
      prev = e.sha256;
      tail.push_back(e);
    }
    RETURN_IF_ERROR(store->AppendJournal(id, tail, std::nullopt));
    if ((a + 1) % 100 == 0) std::fprintf(stderr, "filled %d agents\n", a + 1);
  }
  return OkStatus();
}

// Appends one context.patch to each of `count` agents (round robin from *next), as live agents
// do between two loads of the fleet page; `heads` holds each agent's journal head.
Status Churn(CheckpointStore* store, std::vector<JournalEntry>* heads, int count, int* next) {
  for (int k = 0; k < count; ++k) {
    JournalEntry& head = (*heads)[static_cast<size_t>(*next)];
    *next = (*next + 1) % static_cast<int>(heads->size());
    JournalEntry e = head;
    e.sequence = head.sequence + 1;
    e.payload = "{\"contextSummary\":{\"completedSteps\":" + std::to_string(e.sequence) + "}}";
    e.timestamp_ms = Env::Default()->NowUnixMillis();
    e.prev_sha256 = head.sha256;
    SealJournalEntry(&e);
    RETURN_IF_ERROR(store->AppendJournal(e.agent_id, {e}, std::nullopt));
    head = e;
  }
  return OkStatus();
}

int Run(int agents, int checkpoints, int iterations, const std::string& dir, bool page,
        int64_t cache_ms, int churn) {
  const std::string path =
      dir + "/fleet-" + std::to_string(agents) + "x" + std::to_string(checkpoints) + ".db";
  const bool exists = Env::Default()->FileExists(path);
  auto store = OpenStore("sqlite://" + path);
  if (!store.ok()) return Fail(store.status());
  if (!exists) {
    auto text = Env::Default()->ReadFile(std::string(AGENTCKPT_BENCH_FIXTURES_DIR) +
                                         "/checkpoint-16k.json");
    if (!text.ok()) return Fail(text.status());
    auto base = CheckpointFromJson(*text);
    if (!base.ok()) return Fail(base.status());
    auto t0 = std::chrono::steady_clock::now();
    if (Status s = Fill(store->get(), *base, agents, checkpoints); !s.ok()) return Fail(s);
    std::printf("filled %s in %.1f s\n", path.c_str(), MicrosSince(t0) / 1e6);
  }
  std::vector<JournalEntry> heads;
  if (churn > 0) {
    // The changes go to a copy, so that the kept store stays as filled for later runs.
    store->reset();  // closed: its WAL is folded into the file
    const std::string copy = path + ".churn";
    std::error_code ec;
    std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) return Fail(UnavailableError("cannot copy " + path + ": " + ec.message()));
    for (const char* suffix : {"-wal", "-shm"}) std::filesystem::remove(copy + suffix, ec);
    store = OpenStore("sqlite://" + copy);
    if (!store.ok()) return Fail(store.status());
    auto listed = (*store)->ListAgents();
    if (!listed.ok()) return Fail(listed.status());
    for (const std::string& a : *listed) {
      auto entries = (*store)->ReadJournal(a, 0);
      if (!entries.ok()) return Fail(entries.status());
      if (entries->empty()) return Fail(FailedPreconditionError("agent " + a + " has no journal"));
      heads.push_back(entries->back());
    }
  }
  int next_churn = 0;
  ConsoleOptions options;
  options.bearer_token = kToken;
  options.fleet_row_max_age_ms = cache_ms;
  ConsoleApi api(store->get(), options);
  HttpServer server("127.0.0.1", 0, 1 << 16, &api);
  if (Status s = server.Start(); !s.ok()) return Fail(s);
  std::printf("console_bench: %d agents x %d checkpoints (16 KB fixture, 4-entry journal tail), "
              "%d iterations, store %s, fleet cache %lld ms, %d agents changed before each "
              "request\n",
              agents, checkpoints, iterations, path.c_str(), static_cast<long long>(cache_ms),
              churn);

  KeepAliveClient client(server.port(), std::string("Bearer ") + kToken);
  Latencies fleet;
  size_t bytes = 0;
  int64_t computed = 0, reused = 0;
  for (int i = 0; i <= iterations; ++i) {
    if (i > 0 && churn > 0) {
      if (Status s = Churn(store->get(), &heads, churn, &next_churn); !s.ok()) return Fail(s);
    }
    auto t0 = std::chrono::steady_clock::now();
    KeepAliveReply r = client.Call("GET", "/api/fleet", "");
    double us = MicrosSince(t0);
    if (r.status != 200) {
      std::fprintf(stderr, "GET /api/fleet: %d %s\n", r.status, r.body.substr(0, 200).c_str());
      return 1;
    }
    auto j = nlohmann::json::parse(r.body);
    if (static_cast<int>(j["agents"].size()) != agents) {
      std::fprintf(stderr, "fleet lists %zu agents\n", j["agents"].size());
      return 1;
    }
    bytes = r.body.size();
    if (i > 0) {
      computed += j.value("rowsComputed", 0);
      reused += j.value("rowsReused", 0);
    }
    if (i == 0) {
      std::printf("first GET /api/fleet (cold page cache of this process): %.1f ms\n", us / 1000);
    } else {
      fleet.Add(us);
    }
  }
  std::printf("reply %zu bytes; rows computed %lld, reused %lld (after the first request)\n",
              bytes, static_cast<long long>(computed), static_cast<long long>(reused));
  fleet.Print("GET /api/fleet");
  if (!page) return 0;
  const char* src = std::getenv("AGENTCKPT_SOURCE_DIR");
  std::string root = src != nullptr ? src : AGENTCKPT_BENCH_SOURCE_DIR;
  if (churn > 0) {
    // The page's loads then see the agents as they stand (no change between them).
    std::printf("(the page loads below run with no change between them)\n");
  }
  std::string cmd = "node '" + root + "/bench/console/fleet_page.mjs' '" + root +
                    "/tests/console' http://127.0.0.1:" + std::to_string(server.port()) + "/ " +
                    kToken + " " + std::to_string(agents) + " " + std::to_string(iterations);
  std::fflush(stdout);
  int rc = std::system(cmd.c_str());
  return rc == 0 ? 0 : 1;
}

}  // namespace
}  // namespace agentckpt::bench

int main(int argc, char** argv) {
  int agents = 1000, checkpoints = 48, iterations = 50;
  std::string dir = "/tmp";
  bool page = false;
  int64_t cache_ms = 30000;  // the console's default (--fleet-cache-ms)
  int churn = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--page") {
      page = true;
    } else if (i + 1 < argc && a == "--agents") {
      agents = std::atoi(argv[++i]);
    } else if (i + 1 < argc && a == "--checkpoints") {
      checkpoints = std::atoi(argv[++i]);
    } else if (i + 1 < argc && a == "--iterations") {
      iterations = std::atoi(argv[++i]);
    } else if (i + 1 < argc && a == "--dir") {
      dir = argv[++i];
    } else if (i + 1 < argc && a == "--fleet-cache-ms") {
      cache_ms = std::atoll(argv[++i]);
    } else if (i + 1 < argc && a == "--churn") {
      churn = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: console_bench [--agents N] [--checkpoints N] "
                           "[--iterations N] [--dir DIR] [--page] [--fleet-cache-ms MS] "
                           "[--churn N]\n");
      return 2;
    }
  }
  if (churn < 0 || churn > agents || cache_ms < 0) {
    std::fprintf(stderr, "console_bench: --churn must be 0..agents, --fleet-cache-ms >= 0\n");
    return 2;
  }
  return agentckpt::bench::Run(agents, checkpoints, iterations, dir, page, cache_ms, churn);
}
