#include "tests/support/nats_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/child_spawn.h"

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
  // A port from PickFreePort can be taken by a parallel test before the server binds it; Start
  // reports that (our process exits) and another port is tried.
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = PickFreePort();
    if (Start()) return;
  }
  std::fprintf(stderr, "nats-server did not start (log in %s)\n", store_.path().c_str());
  std::abort();
}

NatsServerProcess::~NatsServerProcess() {
  Kill();
  // A failed test shows what the server said (auth and TLS errors are logged by default).
  if (::testing::Test::HasFailure()) {
    std::ifstream in(store_.path() + "/nats-server.log");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t keep = 4000;
    std::fprintf(stderr, "--- nats-server log (port %d, last %zu bytes) ---\n%s\n---\n", port_,
                 keep, text.substr(text.size() > keep ? text.size() - keep : 0).c_str());
  }
}

std::string NatsServerProcess::url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

bool NatsServerProcess::Start() {
  const std::string log = store_.path() + "/nats-server.log";
  size_t log_offset = 0;
  {
    std::ifstream in(log, std::ios::binary | std::ios::ate);
    if (in) log_offset = static_cast<size_t>(in.tellg());
  }
  std::vector<std::string> args = {"nats-server",         "-js", "-a",         "127.0.0.1", "-p",
                                   std::to_string(port_), "-sd", store_.path()};
  std::istringstream extra(extra_args_);
  for (std::string a; extra >> a;) args.push_back(a);
  ChildSpec spec;
  spec.argv = std::move(args);
  spec.stdout_path = spec.stderr_path = log;
  spec.append = true;
  pid_ = SpawnChild(spec);
  if (pid_ < 0) return false;
  // Ready means OUR process says so: something else may be listening on the port.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;  // exited: e.g. the port was taken
    }
    std::ifstream in(log, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.size() > log_offset && text.find("Server is ready", log_offset) != std::string::npos &&
        WaitForPort(port_, 100)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Kill();
  return false;
}

void NatsServerProcess::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void NatsServerProcess::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Kill();
}

void NatsServerProcess::Restart() {
  Kill();
  if (!Start()) {
    std::fprintf(stderr, "nats-server did not restart on port %d (log in %s)\n", port_,
                 store_.path().c_str());
    std::abort();
  }
}

}  // namespace agentckpt::testing
