// firestore_emulator: a Firestore-compatible REST v1 server for tests and local development.
//
//   firestore_emulator --host 127.0.0.1 --port 8080 [--error-rate 0.2 --error-status 503
//                      --delay-rate 0.1 --delay-ms 3000 --drop-rate 0.05 --seed 1]
//
// Fault settings can also come from FIRESTORE_EMULATOR_ERROR_RATE, _ERROR_STATUS, _DELAY_RATE,
// _DELAY_MS, _DROP_RATE and _SEED (flags win). Runs until SIGINT or SIGTERM.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tools/firestore_emulator/emulator_server.h"

namespace {

template <typename T>
void FromEnv(const char* name, T* out) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return;
  if constexpr (std::is_floating_point_v<T>) {
    *out = std::strtod(v, nullptr);
  } else {
    *out = static_cast<T>(std::strtoll(v, nullptr, 10));
  }
}

}  // namespace

int main(int argc, char** argv) {
  agentckpt::emulator::FaultConfig faults;
  uint64_t seed = 1;
  FromEnv("FIRESTORE_EMULATOR_ERROR_RATE", &faults.error_rate);
  FromEnv("FIRESTORE_EMULATOR_ERROR_STATUS", &faults.error_status);
  FromEnv("FIRESTORE_EMULATOR_DELAY_RATE", &faults.delay_rate);
  FromEnv("FIRESTORE_EMULATOR_DELAY_MS", &faults.delay_ms);
  FromEnv("FIRESTORE_EMULATOR_DROP_RATE", &faults.drop_rate);
  FromEnv("FIRESTORE_EMULATOR_SEED", &seed);

  std::string host = "127.0.0.1";
  int port = 8080;
  CLI::App app{"Firestore-compatible REST v1 emulator"};
  app.add_option("--host", host, "address to listen on");
  app.add_option("--port", port, "port to listen on");
  app.add_option("--error-rate", faults.error_rate, "fraction of requests refused")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--error-status", faults.error_status, "HTTP status of refused requests");
  app.add_option("--delay-rate", faults.delay_rate, "fraction of requests delayed")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--delay-ms", faults.delay_ms, "delay in milliseconds");
  app.add_option("--drop-rate", faults.drop_rate,
                 "fraction of requests processed and then dropped without a reply")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", seed, "seed of the fault generator");
  CLI11_PARSE(app, argc, argv);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before the listener starts its threads

  agentckpt::emulator::EmulatorServer server(host, port, faults, seed);
  agentckpt::Status s = server.Start();
  if (!s.ok()) {
    std::fprintf(stderr, "firestore_emulator: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("firestore_emulator listening on http://%s:%d\n", host.c_str(), port);
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  server.Stop();
  return 0;
}
