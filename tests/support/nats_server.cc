#include "tests/support/nats_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>
#include <vector>

namespace agentckpt::testing {

int PickFreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::perror("PickFreePort");
    std::abort();
  }
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

bool WaitForPort(int port, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

NatsServerProcess::NatsServerProcess(std::string extra_args) : extra_args_(std::move(extra_args)) {
  port_ = PickFreePort();
  Start();
}

NatsServerProcess::~NatsServerProcess() { Kill(); }

std::string NatsServerProcess::url() const {
  return "nats://127.0.0.1:" + std::to_string(port_);
}

void NatsServerProcess::Start() {
  std::vector<std::string> args = {"nats-server", "-js",  "-a",  "127.0.0.1",
                                   "-p",          std::to_string(port_), "-sd", store_.path()};
  std::istringstream extra(extra_args_);
  for (std::string a; extra >> a;) args.push_back(a);
  pid_ = ::fork();
  if (pid_ < 0) {
    std::perror("fork");
    std::abort();
  }
  if (pid_ == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string log = store_.path() + "/nats-server.log";
    std::freopen(log.c_str(), "a", stdout);
    std::freopen(log.c_str(), "a", stderr);
    ::execvp("nats-server", argv.data());
    std::_Exit(127);
  }
  if (!WaitForPort(port_, 10000)) {
    std::fprintf(stderr, "nats-server did not start on port %d (log in %s)\n", port_,
                 store_.path().c_str());
    Kill();
    std::abort();
  }
}

void NatsServerProcess::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void NatsServerProcess::Restart() {
  Kill();
  Start();
}

}  // namespace agentckpt::testing
