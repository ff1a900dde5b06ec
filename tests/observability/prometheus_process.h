// PrometheusProcess: Debian's `prometheus` server as a real child process for tests, on a free
// loopback port with its own data directory, scraping the targets of a given scrape config.
// Stopped by its pid (SIGTERM, then SIGKILL) in Stop() and the destructor.
#pragma once

#include <sys/types.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {

class PrometheusProcess {
 public:
  // `scrape_configs` is the YAML list under scrape_configs: (each item starting with "- ").
  explicit PrometheusProcess(std::string scrape_configs);
  ~PrometheusProcess();
  PrometheusProcess(const PrometheusProcess&) = delete;
  PrometheusProcess& operator=(const PrometheusProcess&) = delete;

  // Starts the server and waits (bounded, 60 s) until GET /-/ready answers 200. kUnavailable
  // when the binary is missing or never gets ready (its log is in the message).
  Status Start();
  // Stops it by pid; idempotent.
  void Stop();

  int port() const { return port_; }
  // POST /api/v1/{endpoint} with `form` (URL-encoded); the "data" member of a "success" answer,
  // else an error carrying the answer.
  StatusOr<nlohmann::json> Api(const std::string& endpoint,
                               const std::map<std::string, std::string>& form);
  // The server's log (stderr), for failure messages.
  std::string Log() const;

 private:
  bool StartOnce();
  std::string scrape_configs_;
  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// `s` encoded for an application/x-www-form-urlencoded body.
std::string FormEncode(const std::string& s);

}  // namespace agentckpt::testing
