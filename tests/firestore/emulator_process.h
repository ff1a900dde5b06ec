// EmulatorProcess: the firestore_emulator binary run as a real child process on a free loopback
// port, stopped by pid (SIGTERM, then SIGKILL). Plus helpers to open a FirestoreStore on it and
// to drive the emulator's control endpoints.
#pragma once

#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/firestore/firestore_store.h"

namespace agentckpt::testing {

// Path of the built emulator binary.
std::string FirestoreEmulatorBinary();

class EmulatorProcess {
 public:
  explicit EmulatorProcess(std::vector<std::string> extra_args = {})
      : extra_args_(std::move(extra_args)) {}
  ~EmulatorProcess() { Stop(); }
  EmulatorProcess(const EmulatorProcess&) = delete;
  EmulatorProcess& operator=(const EmulatorProcess&) = delete;

  // Starts the emulator and waits (bounded) until it answers GET /.
  Status Start();
  // Stops it by pid; idempotent.
  void Stop();

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string host_port() const { return "127.0.0.1:" + std::to_string(port_); }

  // PUT /emulator/v1/faults with {"errorRate", "errorStatus", "delayRate", "delayMs", "dropRate"}.
  Status SetFaults(const nlohmann::json& faults);
  // GET /emulator/v1/stats.
  StatusOr<nlohmann::json> Stats();
  // A raw request to the emulator (path starting with '/'); returns {status, body}.
  StatusOr<std::pair<int, std::string>> Request(const std::string& method, const std::string& path,
                                                const std::string& body = "");

 private:
  std::vector<std::string> extra_args_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// Damages the stored snapshot `checkpoint_id` of `agent` in `project` behind the store's back:
// its sequenceNumber becomes a string value (through the emulator's REST API). Test failures
// on error.
void DamageSnapshotSequence(EmulatorProcess* emulator, const std::string& project,
                            const std::string& agent, const std::string& checkpoint_id);

// A FirestoreStore on the emulator at `host_port` for `project` (database "(default)"), with
// short timeouts suited to loopback. `hedge_after_ms` < 0 keeps the store's default; 0 turns
// hedging off (a test that counts requests: a hedge is a second copy of a slow request).
std::unique_ptr<FirestoreStore> OpenEmulatorStore(const std::string& host_port,
                                                  const std::string& project,
                                                  int64_t request_timeout_ms = 2000,
                                                  int64_t overall_deadline_ms = 20000,
                                                  int64_t hedge_after_ms = -1);

}  // namespace agentckpt::testing
