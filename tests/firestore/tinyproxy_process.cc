#include "tests/firestore/tinyproxy_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "tests/support/child_spawn.h"
#include "tests/support/nats_server.h"

namespace agentckpt::testing {

Status TinyproxyProcess::Start() {
  if (::access("/usr/bin/tinyproxy", X_OK) != 0) {
    return NotFoundError("/usr/bin/tinyproxy is not installed (scripts/setup installs it)");
  }
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = PickFreePort();
    if (port_ == 0) return UnavailableError("no free port");
    {
      std::ofstream conf(dir_.File("tinyproxy.conf"), std::ios::trunc);
      conf << "Port " << port_ << "\nListen 127.0.0.1\nAllow 127.0.0.1\nTimeout 30\n"
           << "MaxClients 64\nLogLevel Connect\nLogFile \"" << dir_.File("tinyproxy.log")
           << "\"\nPidFile \"" << dir_.File("tinyproxy.pid") << "\"\nDisableViaHeader Yes\n";
      if (!user_.empty()) conf << "BasicAuth " << user_ << " " << password_ << "\n";
      if (!conf) return InternalError("cannot write " + dir_.File("tinyproxy.conf"));
    }
    ChildSpec spec;
    spec.argv = {"/usr/bin/tinyproxy", "-d", "-c", dir_.File("tinyproxy.conf")};
    spec.stdout_path = dir_.File("tinyproxy.out");
    spec.stderr_path = dir_.File("tinyproxy.out");
    pid_ = SpawnChild(spec);
    if (pid_ < 0) return InternalError("cannot start tinyproxy");
    for (int i = 0; i < 200; ++i) {                     // bounded: 5 s
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {  // e.g. the port was taken meanwhile
        pid_ = -1;
        break;
      }
      if (WaitForPort(port_, 25)) return OkStatus();
    }
    Stop();
  }
  return UnavailableError("tinyproxy did not start; see " + dir_.File("tinyproxy.out"));
}

void TinyproxyProcess::Stop() { StopChild(&pid_); }

std::vector<std::string> TinyproxyProcess::LoggedRequests() const {
  std::vector<std::string> requests;
  std::ifstream log(dir_.File("tinyproxy.log"));
  std::string line;
  const std::string marker = "Request (file descriptor ";
  while (std::getline(log, line)) {
    size_t at = line.find(marker);
    if (at == std::string::npos) continue;
    size_t colon = line.find("): ", at);
    if (colon != std::string::npos) requests.push_back(line.substr(colon + 3));
  }
  return requests;
}

}  // namespace agentckpt::testing
