// Store comparison benchmark: the same checkpoint-store operations on every backend in one run,
// printed as one table (p50/p99 per store and operation, and requests per operation where the
// store counts them).
//
//   build/bin/store_compare_bench [--iterations N] [--fixtures DIR] [--warmup N]
//
// Stores, one after the other (each started before and stopped after its own measurement):
//   sqlite        a SQLite file in a fresh temp dir (WAL, synchronous=FULL)
//   firestore     the Firestore emulator on loopback (only in builds with AGENTCKPT_WITH_FIRESTORE;
//                 started as firestore_bench does, stopped by its pid)
//   jetstream-r1  one `nats-server -js` (NatsServerProcess), streams with replicas=1
//   jetstream-r3  a 3-node cluster on loopback (NatsClusterProcess), streams with replicas=3
//
// Operations, per iteration, after a warm-up past keep=48 (so every measured put also prunes):
//   put          Put of the 16 KB fixture (tests/fixtures/checkpoint-16k.json), keep 48, no lease;
//                the seal (normalize, canonical JSON, SHA-256) is not timed: it is the same for
//                every store and printed once on its own line
//   append       AppendJournal of one context.patch entry (~200 bytes payload), no lease
//   latest       GetLatestVerified (checks it returns the put just made)
//   put+compact  a second phase: kAppendsPerCheckpoint untimed appends, then a Put of a checkpoint
//                whose journal position is the last appended entry, with journal_compact_through
//                = the journal position of the previous such checkpoint (what CheckpointWriter
//                does: the entries the newest stored checkpoint already includes are deleted in
//                the new put's commit)
// Requests per operation: the store's requests_sent() delta over the timed calls / operations
// (NATS requests for JetStream, HTTP requests for Firestore; SQLite makes none).
//
// A store whose operation fails is reported with the exact error in the table; the others still
// run. Exit status 1 when any store failed.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/percentiles.h"
#include "checkpoint/canonical.h"
#include "checkpoint/checkpoint_json.h"
#include "common/env.h"
#include "common/ids.h"
#include "journal/journal_entry.h"
#include "store/jetstream/jetstream_store.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/support/nats_cluster.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

#ifdef AGENTCKPT_WITH_FIRESTORE
#include "store/firestore/firestore_http.h"
#include "store/firestore/firestore_store.h"
#endif

namespace agentckpt::bench {
namespace {

constexpr int kKeep = 48;
constexpr int kAppendsPerCheckpoint = 4;  // journal appends between two put+compact
constexpr int kCompactWarmup = 5;
constexpr size_t kPayloadBytes = 200;

// One row of the table.
struct Row {
  std::string store;
  std::string op;
  Latencies lat;
  uint64_t requests = 0;
  bool counts_requests = false;
  std::string error;  // set when the operation failed
};

// A store under test and how to read its request counter (empty: it has none).
struct Target {
  std::string name;
  CheckpointStore* store = nullptr;
  std::function<uint64_t()> requests;
};

// A context.patch payload of about kPayloadBytes bytes (a valid RFC 7386 merge patch).
std::string PatchPayload(int64_t seq) {
  std::string head = "{\"contextSummary\":{\"completedSteps\":" + std::to_string(seq) +
                     ",\"draftContent\":\"";
  std::string tail = "\"}}";
  std::string pad;
  while (head.size() + pad.size() + tail.size() < kPayloadBytes) {
    pad.push_back(static_cast<char>('a' + (pad.size() + seq) % 26));
  }
  return head + pad + tail;
}

class Runner {
 public:
  Runner(const Target& t, const Checkpoint& base, int iterations, int warmup)
      : t_(t), base_(base), iterations_(iterations), warmup_(warmup) {
    for (const char* op : {"put", "append", "latest", "put+compact"}) {
      Row r;
      r.store = t.name;
      r.op = op;
      r.counts_requests = static_cast<bool>(t.requests);
      rows_.push_back(std::move(r));
    }
  }

  // Runs both phases; stops at the first failure (recorded in its row).
  void Run(Latencies* seal) {
    for (int i = 0; i < warmup_ + iterations_; ++i) {
      const bool measured = i >= warmup_;
      if (!Put(std::nullopt, 0, measured ? &rows_[0] : nullptr, measured ? seal : nullptr)) return;
      if (!Append(measured ? &rows_[1] : nullptr)) return;
      if (!Latest(measured ? &rows_[2] : nullptr)) return;
    }
    int64_t previous = 0;  // the journal position of the newest put+compact checkpoint
    for (int i = 0; i < kCompactWarmup + iterations_; ++i) {
      for (int k = 0; k < kAppendsPerCheckpoint; ++k) {
        if (!Append(nullptr)) return;
      }
      JournalPosition pos{journal_seq_, journal_prev_};
      if (!Put(pos, previous, i >= kCompactWarmup ? &rows_[3] : nullptr, nullptr)) return;
      previous = journal_seq_;
    }
  }

  std::vector<Row>& rows() { return rows_; }

 private:
  uint64_t Requests() const { return t_.requests ? t_.requests() : 0; }

  bool Fail(Row* row, const std::string& op, const std::string& what) {
    Row* r = row;
    if (r == nullptr) {
      for (auto& x : rows_) {
        if (x.op == op) r = &x;
      }
    }
    char where[160];
    std::snprintf(where, sizeof(where), "%s (checkpoint seq %lld, journal seq %lld): ", op.c_str(),
                  static_cast<long long>(seq_), static_cast<long long>(journal_seq_));
    r->error = where + what;
    std::fprintf(stderr, "%s %s\n", t_.name.c_str(), r->error.c_str());
    return false;
  }

  bool Put(std::optional<JournalPosition> journal, int64_t compact_through, Row* row,
           Latencies* seal) {
    const std::string op = journal ? "put+compact" : "put";
    Checkpoint cp = base_;
    cp.sequence_number = seq_ + 1;
    cp.checkpoint_id = *NewUuidV4(Env::Default());
    cp.timestamp_ms = base_.timestamp_ms + seq_ + 1;
    if (journal) cp.journal = *journal;
    auto t0 = std::chrono::steady_clock::now();
    auto sealed = Seal(std::move(cp));
    double seal_us = MicrosSince(t0);
    if (!sealed.ok()) return Fail(row, op, "seal: " + sealed.status().ToString());
    PutOptions opts{kKeep};
    opts.journal_compact_through = compact_through;
    uint64_t r0 = Requests();
    auto t1 = std::chrono::steady_clock::now();
    auto put = t_.store->Put(*sealed, opts);
    double us = MicrosSince(t1);
    uint64_t r1 = Requests();
    if (!put.ok()) return Fail(row, op, put.status().ToString());
    ++seq_;
    if (row) {
      row->lat.Add(us);
      row->requests += r1 - r0;
    }
    if (seal) seal->Add(seal_us);
    return true;
  }

  bool Append(Row* row) {
    JournalEntry e;
    e.agent_id = base_.agent_id;
    e.sequence = journal_seq_ + 1;
    e.epoch = 0;
    e.kind = JournalKind::kContextPatch;
    e.payload = PatchPayload(e.sequence);
    e.timestamp_ms = base_.timestamp_ms + e.sequence;
    e.prev_sha256 = journal_prev_;
    SealJournalEntry(&e);
    std::vector<JournalEntry> entries{e};
    uint64_t r0 = Requests();
    auto t0 = std::chrono::steady_clock::now();
    Status s = t_.store->AppendJournal(base_.agent_id, entries, std::nullopt);
    double us = MicrosSince(t0);
    uint64_t r1 = Requests();
    if (!s.ok()) return Fail(row, "append", s.ToString());
    journal_seq_ = e.sequence;
    journal_prev_ = e.sha256;
    if (row) {
      row->lat.Add(us);
      row->requests += r1 - r0;
    }
    return true;
  }

  bool Latest(Row* row) {
    uint64_t r0 = Requests();
    auto t0 = std::chrono::steady_clock::now();
    auto l = t_.store->GetLatestVerified(base_.agent_id);
    double us = MicrosSince(t0);
    uint64_t r1 = Requests();
    if (!l.ok()) return Fail(row, "latest", l.status().ToString());
    if (l->checkpoint.sequence_number != seq_) {
      return Fail(row, "latest",
                  "returned sequence " + std::to_string(l->checkpoint.sequence_number) +
                      ", expected " + std::to_string(seq_));
    }
    if (row) {
      row->lat.Add(us);
      row->requests += r1 - r0;
    }
    return true;
  }

  const Target& t_;
  const Checkpoint& base_;
  const int iterations_;
  const int warmup_;
  int64_t seq_ = 0;  // the last checkpoint sequence stored
  int64_t journal_seq_ = 0;
  std::string journal_prev_ = kJournalGenesisSha256;
  std::vector<Row> rows_;
};

void Measure(const Target& t, const Checkpoint& base, int iterations, int warmup, Latencies* seal,
             std::vector<Row>* out) {
  std::printf("measuring %s ...\n", t.name.c_str());
  std::fflush(stdout);
  auto t0 = std::chrono::steady_clock::now();
  Runner runner(t, base, iterations, warmup);
  runner.Run(seal);
  for (auto& r : runner.rows()) out->push_back(std::move(r));
  std::printf("  done in %.1f s\n", MicrosSince(t0) / 1e6);
  std::fflush(stdout);
}

// A row for a store that could not be opened.
void OpenFailed(const std::string& name, const Status& s, std::vector<Row>* out) {
  std::fprintf(stderr, "%s open: %s\n", name.c_str(), s.ToString().c_str());
  Row r;
  r.store = name;
  r.op = "open";
  r.error = s.ToString();
  out->push_back(std::move(r));
}

// Opens a JetStream store on `servers` and measures it. False when the store does not open (a
// row says why).
bool MeasureJetStream(const std::string& name, const std::string& servers, int replicas,
                      testing::NatsClusterProcess* cluster, const Checkpoint& base,
                      int iterations, int warmup, Latencies* seal, std::vector<Row>* out) {
  JetStreamStoreOptions options;
  options.api.servers = servers;
  options.prefix = "BENCH";
  options.replicas = replicas;
  options.create = true;
  auto store = JetStreamStore::Open(options);
  if (!store.ok()) {
    OpenFailed(name, store.status(), out);
    return false;
  }
  if (cluster != nullptr) {
    for (const std::string& stream :
         {(*store)->AgentsStream(), (*store)->CheckpointsStream(), (*store)->JournalStream()}) {
      Status s = cluster->WaitForStreamHealthy(stream, replicas, 30'000);
      if (!s.ok()) {
        OpenFailed(name, s.WithContext("stream " + stream), out);
        return false;
      }
    }
  }
  JetStreamStore* js = store->get();
  Target t{name, js, [js] { return js->requests_sent(); }};
  Measure(t, base, iterations, warmup, seal, out);
  // What the streams hold afterwards (one replica's bytes), for the sizing in
  // docs/jetstream-store.md.
  for (const std::string& stream : {js->AgentsStream(), js->CheckpointsStream(), js->JournalStream()}) {
    auto st = js->api()->StreamPlacement(stream);
    if (st.ok()) {
      std::printf("%s stored: %-14s %6llu messages %10llu bytes\n", name.c_str(), stream.c_str(),
                  static_cast<unsigned long long>(st->messages),
                  static_cast<unsigned long long>(st->bytes));
    }
  }
  return true;
}

#ifdef AGENTCKPT_WITH_FIRESTORE
// Starts the emulator on a free loopback port (as firestore_bench does); returns its pid or -1.
pid_t StartEmulator(std::string* host_port) {
  int port = testing::PickFreePort();
  *host_port = "127.0.0.1:" + std::to_string(port);
  pid_t pid = ::fork();
  if (pid == 0) {
    std::string p = std::to_string(port);
    ::execl(AGENTCKPT_FIRESTORE_EMULATOR_BIN, AGENTCKPT_FIRESTORE_EMULATOR_BIN, "--host",
            "127.0.0.1", "--port", p.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 200; ++i) {
    auto r = HttpOnce("GET", "http://" + *host_port + "/", {}, "", "", 500);
    if (r.ok() && r->status == 200) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

void MeasureFirestore(const Checkpoint& base, int iterations, int warmup, Latencies* seal,
                      std::vector<Row>* out) {
  const std::string name = "firestore-emulator";
  std::string host_port;
  pid_t pid = StartEmulator(&host_port);
  if (pid < 0) return OpenFailed(name, UnavailableError("cannot start the Firestore emulator"), out);
  {
    FirestoreStoreOptions options;
    options.project_id = "compare-bench-" + std::to_string(::getpid());
    options.endpoint = "http://" + host_port;
    auto store = FirestoreStore::Open(std::move(options));
    if (!store.ok()) {
      OpenFailed(name, store.status(), out);
    } else {
      FirestoreStore* fs = store->get();
      Target t{name, fs, [fs] { return fs->requests_sent(); }};
      Measure(t, base, iterations, warmup, seal, out);
    }
  }
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
}
#endif

void PrintTable(std::vector<Row>& rows) {  // non-const: Percentile sorts the samples
  std::printf("\n%-22s %-12s %6s %10s %10s %8s\n", "store", "operation", "n", "p50 ms", "p99 ms",
              "req/op");
  std::printf("%s\n", std::string(22 + 1 + 12 + 1 + 6 + 1 + 10 + 1 + 10 + 1 + 8, '-').c_str());
  std::string last_store;
  for (Row& r : rows) {
    if (!last_store.empty() && r.store != last_store) std::printf("\n");
    last_store = r.store;
    if (r.lat.count() == 0) {
      std::printf("%-22s %-12s %6s %s\n", r.store.c_str(), r.op.c_str(), "-",
                  r.error.empty() ? "not run (an earlier operation failed)"
                                  : ("FAILED: " + r.error).c_str());
      continue;
    }
    char req[32] = "-";
    if (r.counts_requests) {
      std::snprintf(req, sizeof(req), "%.2f",
                    static_cast<double>(r.requests) / static_cast<double>(r.lat.count()));
    }
    std::printf("%-22s %-12s %6zu %10.3f %10.3f %8s\n", r.store.c_str(), r.op.c_str(),
                r.lat.count(), r.lat.Percentile(50) / 1000, r.lat.Percentile(99) / 1000, req);
    if (!r.error.empty()) {
      std::printf("%-22s %-12s FAILED after %zu samples: %s\n", "", "", r.lat.count(),
                  r.error.c_str());
    }
  }
  std::fflush(stdout);
}

int Run(int iterations, int warmup, const std::string& fixtures) {
  const std::string fixture = fixtures + "/checkpoint-16k.json";
  auto text = Env::Default()->ReadFile(fixture);
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", text.status().ToString().c_str());
    return 1;
  }
  auto base = CheckpointFromJson(*text);
  if (!base.ok()) {
    std::fprintf(stderr, "%s\n", base.status().ToString().c_str());
    return 1;
  }
  std::vector<Row> rows;
  Latencies seal;

  {
    testing::TempDir dir;
    std::printf("sqlite: %s\n", dir.File("store.db").c_str());
    auto store = SqliteStore::Open(dir.File("store.db"));
    if (!store.ok()) {
      OpenFailed("sqlite", store.status(), &rows);
    } else {
      Measure(Target{"sqlite", store->get(), {}}, *base, iterations, warmup, &seal, &rows);
    }
  }
#ifdef AGENTCKPT_WITH_FIRESTORE
  MeasureFirestore(*base, iterations, warmup, &seal, &rows);
#endif
  {
    testing::NatsServerProcess server;
    std::printf("jetstream-r1: nats-server at %s\n", server.url().c_str());
    MeasureJetStream("jetstream-r1", server.url(), 1, nullptr, *base, iterations, warmup, &seal,
                     &rows);
  }
  bool r3_one_url = false;
  {
    std::printf("jetstream-r3: starting a 3-node cluster ...\n");
    std::fflush(stdout);
    testing::NatsClusterProcess cluster;
    std::printf("jetstream-r3: cluster at %s\n", cluster.url().c_str());
    if (!MeasureJetStream("jetstream-r3", cluster.url(), 3, &cluster, *base, iterations, warmup,
                          &seal, &rows)) {
      // The failure stays in the table; the R3 streams are still measured through one server's
      // URL (requests for a stream led by another node go over the cluster's routes).
      std::printf("jetstream-r3: the store did not open with the server list; measuring again "
                  "through %s only\n", cluster.url(0).c_str());
      r3_one_url = MeasureJetStream("jetstream-r3 (n1 url)", cluster.url(0), 3, &cluster, *base,
                                    iterations, warmup, &seal, &rows);
    }
  }

  std::printf("\nstore_compare_bench: %d iterations per operation after %d warm-up rounds "
              "(put+compact: %d), fixture %s (%zu bytes), keep %d, no lease\n",
              iterations, warmup, kCompactWarmup, fixture.c_str(), text->size(), kKeep);
  std::printf("  put: Put only (seal not timed; seal p50 %.3f ms, p99 %.3f ms); append: one "
              "context.patch entry, %zu-byte payload; latest: GetLatestVerified; put+compact: a "
              "Put after %d appends, journal_compact_through = the previous checkpoint's journal "
              "position\n",
              seal.Percentile(50) / 1000, seal.Percentile(99) / 1000, kPayloadBytes,
              kAppendsPerCheckpoint);
  std::printf("  durability: sqlite WAL, synchronous=FULL (fsync per commit); jetstream file "
              "storage, ack after the write to the stream's replicas (R1: one server, R3: a "
              "quorum of 2 of 3), nats-server default sync (fsync every 2 min, not per write); "
              "firestore = the local emulator, in memory: friendlier than production (no network, "
              "no replication, no disk)\n");
  std::printf("  req/op: requests_sent() delta over the timed calls / n (NATS requests for "
              "JetStream, HTTP requests for Firestore)\n");
  if (r3_one_url) {
    std::printf("  jetstream-r3 (n1 url): the R3 cluster's streams, the store given only server "
                "n1's URL, because it did not open with the comma-separated list of all three "
                "(the open row says why)\n");
  }
  PrintTable(rows);
  for (const Row& r : rows) {
    if (!r.error.empty()) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace agentckpt::bench

int main(int argc, char** argv) {
  int iterations = 300;
  int warmup = 60;  // past keep=48, so every measured put also prunes one checkpoint
  const char* fixtures_env = std::getenv("AGENTCKPT_FIXTURES_DIR");
  std::string fixtures =
      fixtures_env && *fixtures_env ? fixtures_env : AGENTCKPT_BENCH_FIXTURES_DIR;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iterations")) {
      iterations = std::atoi(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--warmup")) {
      warmup = std::atoi(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--fixtures")) {
      fixtures = argv[i + 1];
    } else {
      std::fprintf(stderr, "usage: %s [--iterations N] [--warmup N] [--fixtures DIR]\n", argv[0]);
      return 2;
    }
  }
  if (iterations < 1) iterations = 1;
  if (warmup < agentckpt::bench::kKeep + 1) warmup = agentckpt::bench::kKeep + 1;
  return agentckpt::bench::Run(iterations, warmup, std::string(fixtures));
}
