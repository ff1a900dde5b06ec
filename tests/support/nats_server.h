// NatsServerProcess: a real `nats-server -js` for tests, on a free loopback port with its own
// JetStream store directory. Started in the constructor (waits until it accepts connections,
// bounded), stopped by its pid in the destructor. Kill() / Restart() support outage tests.
#pragma once

#include <sys/types.h>

#include <string>

#include "tests/support/temp_dir.h"

namespace agentckpt::testing {

class NatsServerProcess {
 public:
  // Starts the server; aborts the test binary if it cannot (nats-server missing or not ready
  // within 10 s). `extra_args` are appended to the command line (e.g. "--user u --pass p").
  explicit NatsServerProcess(std::string extra_args = "");
  ~NatsServerProcess();
  NatsServerProcess(const NatsServerProcess&) = delete;
  NatsServerProcess& operator=(const NatsServerProcess&) = delete;

  // "nats://127.0.0.1:PORT"
  std::string url() const;
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& store_dir() const { return store_.path(); }

  // SIGKILLs the server and reaps it.
  void Kill();
  // Stops the server as an operator would (SIGTERM: it flushes its streams' and consumers' state
  // and exits), reaps it; SIGKILLs it if it has not exited within 10 s.
  void Stop();
  // Starts it again on the same port and store directory (after Kill or Stop; SIGKILLs it first
  // if it still runs), waiting until ready.
  void Restart();

 private:
  // Starts the server on port_; true once this process reports it is ready, false if it exited
  // (e.g. the port was taken) or did not get ready within 10 s.
  bool Start();
  TempDir store_;
  std::string extra_args_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read, close).
int PickFreePort();

// Waits until something accepts TCP connections on 127.0.0.1:port; false after `timeout_ms`.
bool WaitForPort(int port, int timeout_ms);

}  // namespace agentckpt::testing
