// Store benchmark: put and latest-verified of the reference fixtures on a SQLite file on disk
// (WAL, synchronous=FULL: every put is fsynced), printing p50/p99.
//
//   build/bin/store_bench [--iterations N] [--dir DIR] [--fixtures DIR]
//
// Each put is a full checkpoint write as the sidecar does it: seal (normalize, canonical JSON,
// SHA-256) + one transaction with the insert and retention pruning (keep 48).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/common/percentiles.h"
#include "checkpoint/canonical.h"
#include "checkpoint/checkpoint_json.h"
#include "common/env.h"
#include "common/ids.h"
#include "store/sqlite/sqlite_store.h"

namespace agentckpt::bench {
namespace {

// The floor under any durable write on this disk: a 16 KiB pwrite + fdatasync of a file in
// `dir`, overwriting in place (as a WAL does once it has wrapped).
void PrintFsyncBaseline(int iterations, const std::string& dir) {
  std::string path = dir + "/bench-fsync-" + std::to_string(::getpid()) + ".dat";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return;
  std::string block(16384, 'x');
  Latencies sync;
  for (int i = 0; i < iterations + 20; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    if (::pwrite(fd, block.data(), block.size(), (i % 64) * 16384L) < 0 || ::fdatasync(fd) != 0) {
      break;
    }
    if (i >= 20) sync.Add(MicrosSince(t0));
  }
  ::close(fd);
  ::unlink(path.c_str());
  sync.Print("baseline: 16 KiB pwrite + fdatasync");
}

int Run(int iterations, const std::string& dir, const std::string& fixtures) {
  std::printf("store_bench: %d iterations per fixture, database in %s\n", iterations, dir.c_str());
  PrintFsyncBaseline(iterations, dir);
  for (const char* name : {"checkpoint-16k.json", "checkpoint-max.json"}) {
    auto text = Env::Default()->ReadFile(fixtures + "/" + name);
    if (!text.ok()) {
      std::fprintf(stderr, "%s\n", text.status().ToString().c_str());
      return 1;
    }
    auto base = CheckpointFromJson(*text);
    if (!base.ok()) {
      std::fprintf(stderr, "%s\n", base.status().ToString().c_str());
      return 1;
    }
    std::string path = dir + "/bench-" + std::to_string(::getpid()) + "-" + name + ".db";
    auto store = SqliteStore::Open(path);
    if (!store.ok()) {
      std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
      return 1;
    }
    Latencies put, latest, seal_only;
    for (int i = 0; i < iterations + 20; ++i) {
      Checkpoint cp = *base;
      cp.sequence_number = i + 1;
      cp.checkpoint_id = *NewUuidV4(Env::Default());
      auto t0 = std::chrono::steady_clock::now();
      auto sealed = Seal(std::move(cp));
      double seal_us = MicrosSince(t0);
      if (!sealed.ok()) {
        std::fprintf(stderr, "%s\n", sealed.status().ToString().c_str());
        return 1;
      }
      auto r = (*store)->Put(*sealed, PutOptions{48});
      double put_us = MicrosSince(t0);
      if (!r.ok()) {
        std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
        return 1;
      }
      auto t1 = std::chrono::steady_clock::now();
      auto l = (*store)->GetLatestVerified(base->agent_id);
      double latest_us = MicrosSince(t1);
      if (!l.ok() || l->checkpoint.sequence_number != i + 1) {
        std::fprintf(stderr, "latest-verified failed\n");
        return 1;
      }
      if (i < 20) continue;  // warm-up
      seal_only.Add(seal_us);
      put.Add(put_us);
      latest.Add(latest_us);
    }
    std::string n(name);
    seal_only.Print(n + " seal (no I/O)");
    put.Print(n + " put (seal+fsync)");
    latest.Print(n + " latest-verified");
    store->reset();
    for (const char* suffix : {"", "-wal", "-shm"}) ::unlink((path + suffix).c_str());
  }
  return 0;
}

}  // namespace
}  // namespace agentckpt::bench

int main(int argc, char** argv) {
  int iterations = 2000;
  std::string dir = ".";
  const char* fixtures_env = std::getenv("AGENTCKPT_FIXTURES_DIR");
  std::string fixtures =
      fixtures_env && *fixtures_env ? fixtures_env : AGENTCKPT_BENCH_FIXTURES_DIR;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iterations")) iterations = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--dir")) dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--fixtures")) fixtures = argv[i + 1];
  }
  return agentckpt::bench::Run(iterations, dir, fixtures);
}
