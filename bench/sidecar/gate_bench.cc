// Approval gates (docs/gates.md): from a resolution sent on NATS (agent.{id}.gate.resolve) to
// the agent's waiting GET /v1/gates/{id}?waitSeconds=30 returning, p50/p99; and the NATS
// request's own round trip (reply after the decision is durable).
// Settings: a real nats-server and `agentckpt run` on this machine, CKPT_DURABILITY=sync, SQLite
// store, CKPT_PERIOD_S=300; one agent, one gate at a time; the waiting client is cpprestsdk
// (keep-alive) over localhost, the resolver a nats.c connection. Each gate is requested, the
// waiter's GET is sent and left 5 ms to park in the sidecar, then the resolution is sent.
// Usage: gate_bench [gates] [dir]
#include <cpprest/http_client.h>
#include <nats/nats.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "bench/common/percentiles.h"
#include "nats/nats_connect.h"
#include "nats/subjects.h"
#include "tests/sidecar/sidecar_process.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace {

using agentckpt::bench::Latencies;
using agentckpt::bench::MicrosSince;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace http = web::http;

constexpr char kAgent[] = "bench-gate";

// GET `path` and its status (0 on a transport error).
int Get(http::client::http_client& c, const std::string& path) {
  try {
    http::http_response r = c.request(http::methods::GET, path).get();
    r.extract_utf8string(true).get();
    return r.status_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "GET %s: %s\n", path.c_str(), e.what());
    return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace agentckpt;
  using namespace agentckpt::testing;
  const int gates = argc > 1 ? std::atoi(argv[1]) : 300;
  TempDir tmp;
  const std::string dir = argc > 2 ? argv[2] : tmp.path();
  setenv("AGENTCKPT_BIN", AGENTCKPT_BIN_DEFAULT, 0);
  NatsServerProcess nats;
  const int port = PickFreePort();
  SidecarProcess sidecar({{"AGENT_ID", kAgent},
                          {"NATS_URL", nats.url()},
                          {"CKPT_STORE", "sqlite://" + dir + "/gates.db"},
                          {"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(port)},
                          {"CKPT_PERIOD_S", "300"},
                          {"CKPT_LOG_LEVEL", "warn"}},
                         dir);
  if (!sidecar.WaitHealthy(port)) {
    std::fprintf(stderr, "sidecar did not start:\n%s\n", sidecar.Stderr().c_str());
    return 1;
  }
  for (int i = 0; i < 200 && HttpCall(port, "GET", "/readyz").status != 200; ++i) usleep(50000);
  auto nc = ConnectNatsUrl(nats.url());
  if (!nc.ok()) {
    std::fprintf(stderr, "%s\n", nc.status().ToString().c_str());
    return 1;
  }
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  http::client::http_client waiter_client(base);
  const std::string subject = subjects::GateResolve(kAgent);
  Latencies to_get, reply;
  int failures = 0;
  for (int i = 0; i < gates; ++i) {
    const std::string id = "bench-" + std::to_string(i);
    HttpReply made =
        HttpCall(port, "POST", "/v1/gates", json{{"gateId", id}, {"reason", "bench"}}.dump());
    if (made.status != 201) {
      std::fprintf(stderr, "POST /v1/gates: %d %s\n", made.status, made.body.c_str());
      return 1;
    }
    std::mutex mu;
    std::condition_variable cv;
    bool sent = false;
    Clock::time_point returned;
    int status = 0;
    std::thread waiter([&] {
      {
        std::lock_guard<std::mutex> lock(mu);
        sent = true;
      }
      cv.notify_all();
      status = Get(waiter_client, "/v1/gates/" + id + "?waitSeconds=30");
      returned = Clock::now();
    });
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return sent; });
    }
    usleep(5000);  // lets the GET reach the sidecar and park (not part of any figure)
    const std::string body = json{{"gateId", id}, {"decision", "approved"}, {"by", "bench"}}.dump();
    natsMsg* msg = nullptr;
    const Clock::time_point start = Clock::now();
    natsStatus s = natsConnection_Request(&msg, nc->get(), subject.c_str(), body.data(),
                                          static_cast<int>(body.size()), 5000);
    reply.Add(MicrosSince(start));
    if (msg != nullptr) natsMsg_Destroy(msg);
    waiter.join();
    if (s != NATS_OK || status != 200) {
      ++failures;
      continue;
    }
    to_get.Add(std::chrono::duration<double, std::micro>(returned - start).count());
  }
  std::printf("gate bench: %d gates, sync durability, SQLite in %s, nats-server %s\n", gates,
              dir.c_str(), nats.url().c_str());
  to_get.Print("NATS resolution -> waiting GET returns");
  reply.Print("NATS gate.resolve request/reply");
  if (failures > 0) std::printf("failures: %d\n", failures);
  return failures == 0 ? 0 : 1;
}
