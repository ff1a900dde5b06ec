// TinyproxyProcess: Debian's tinyproxy (a real HTTP forward proxy) run as a child process on a
// free loopback port with its own config and log in a temporary directory, stopped by pid. Its
// log is the independent record of what went through it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {

class TinyproxyProcess {
 public:
  // `user`/`password` non-empty: the proxy requires them (BasicAuth; 407 otherwise).
  explicit TinyproxyProcess(std::string user = "", std::string password = "")
      : user_(std::move(user)), password_(std::move(password)) {}
  ~TinyproxyProcess() { Stop(); }
  TinyproxyProcess(const TinyproxyProcess&) = delete;
  TinyproxyProcess& operator=(const TinyproxyProcess&) = delete;

  // Starts tinyproxy and waits (bounded) until its port accepts connections. kNotFound when
  // tinyproxy is not installed (scripts/setup installs it).
  Status Start();
  // Stops it by pid (SIGTERM, then SIGKILL); idempotent.
  void Stop();

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  // The request lines tinyproxy logged ("GET http://host:port/path HTTP/1.1"), in order.
  std::vector<std::string> LoggedRequests() const;

 private:
  std::string user_, password_;
  TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace agentckpt::testing
