// Firestore store benchmark against the emulator on loopback: HTTP requests per operation and
// p50/p99 latency of put (seal + one :commit with retention deletes, keep 48) and of
// latest-verified (one :runQuery + verification).
//
//   build/bin/firestore_bench [--iterations N] [--fixtures DIR] [--emulator HOST:PORT]
//
// Without --emulator the bench starts the firestore_emulator binary on a free loopback port and
// stops it by pid when done.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "bench/common/percentiles.h"
#include "checkpoint/canonical.h"
#include "checkpoint/checkpoint_json.h"
#include "common/env.h"
#include "common/ids.h"
#include "store/firestore/firestore_http.h"
#include "store/firestore/firestore_store.h"

namespace agentckpt::bench {
namespace {

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// Starts the emulator; returns its pid (or -1) and sets `host_port`.
pid_t StartEmulator(std::string* host_port) {
  int port = FreePort();
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

int Run(int iterations, const std::string& fixtures, const std::string& host_port) {
  std::printf("firestore_bench: %d iterations per fixture, emulator at %s\n", iterations,
              host_port.c_str());
  int project = 0;
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
    FirestoreStoreOptions options;
    options.project_id = "bench-" + std::to_string(::getpid()) + "-" + std::to_string(project++);
    options.endpoint = "http://" + host_port;
    auto store = FirestoreStore::Open(std::move(options));
    if (!store.ok()) {
      std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
      return 1;
    }
    const int warmup = 60;  // past keep=48, so every measured put also deletes one
    Latencies put, latest;
    uint64_t put_requests = 0, latest_requests = 0;
    int pruned = 0;
    for (int i = 0; i < iterations + warmup; ++i) {
      Checkpoint cp = *base;
      cp.sequence_number = i + 1;
      cp.checkpoint_id = *NewUuidV4(Env::Default());
      uint64_t r0 = (*store)->requests_sent();
      auto t0 = std::chrono::steady_clock::now();
      auto sealed = Seal(std::move(cp));
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
      uint64_t r1 = (*store)->requests_sent();
      auto t1 = std::chrono::steady_clock::now();
      auto l = (*store)->GetLatestVerified(base->agent_id);
      double latest_us = MicrosSince(t1);
      if (!l.ok() || l->checkpoint.sequence_number != i + 1) {
        std::fprintf(stderr, "latest-verified failed\n");
        return 1;
      }
      uint64_t r2 = (*store)->requests_sent();
      if (i < warmup) continue;
      put.Add(put_us);
      latest.Add(latest_us);
      put_requests += r1 - r0;
      latest_requests += r2 - r1;
      pruned += r->pruned;
    }
    std::string n(name);
    put.Print(n + " put (seal+commit)");
    latest.Print(n + " latest-verified");
    std::printf("%-40s put %.2f req/op (%d retention deletes), latest-verified %.2f req/op\n",
                (n + " requests").c_str(), static_cast<double>(put_requests) / iterations, pruned,
                static_cast<double>(latest_requests) / iterations);
  }
  return 0;
}

}  // namespace
}  // namespace agentckpt::bench

int main(int argc, char** argv) {
  int iterations = 500;
  const char* fixtures_env = std::getenv("AGENTCKPT_FIXTURES_DIR");
  std::string fixtures =
      fixtures_env && *fixtures_env ? fixtures_env : AGENTCKPT_BENCH_FIXTURES_DIR;
  std::string emulator;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iterations"))
      iterations = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--fixtures"))
      fixtures = argv[i + 1];
    else if (!std::strcmp(argv[i], "--emulator"))
      emulator = argv[i + 1];
  }
  if (iterations < 1) iterations = 1;
  pid_t pid = -1;
  if (emulator.empty()) {
    pid = agentckpt::bench::StartEmulator(&emulator);
    if (pid < 0) {
      std::fprintf(stderr, "cannot start the Firestore emulator\n");
      return 1;
    }
  }
  int rc = agentckpt::bench::Run(iterations, fixtures, emulator);
  if (pid > 0) {
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
  }
  return rc;
}
