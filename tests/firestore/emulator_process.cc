#include "tests/firestore/emulator_process.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "store/firestore/firestore_http.h"
#include "tests/support/child_spawn.h"

namespace agentckpt::testing {
namespace {

int PickFreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

}  // namespace

std::string FirestoreEmulatorBinary() { return AGENTCKPT_FIRESTORE_EMULATOR_BIN; }

Status EmulatorProcess::Start() {
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = PickFreePort();
    if (port_ == 0) return UnavailableError("no free port");
    std::vector<std::string> args = {FirestoreEmulatorBinary(), "--host", "127.0.0.1", "--port",
                                     std::to_string(port_)};
    args.insert(args.end(), extra_args_.begin(), extra_args_.end());
    ChildSpec spec;
    spec.argv = std::move(args);
    pid_ = SpawnChild(spec);
    if (pid_ < 0) return InternalError("cannot start " + FirestoreEmulatorBinary());
    // Bounded polling until it answers (or exits, e.g. because the port was taken meanwhile).
    for (int i = 0; i < 200; ++i) {
      int wstatus = 0;
      if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      auto reply = HttpOnce("GET", "http://" + host_port() + "/", {}, "", "", 500);
      if (reply.ok() && reply->status == 200) return OkStatus();
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    Stop();
  }
  return UnavailableError("the Firestore emulator did not start");
}

void EmulatorProcess::Stop() { StopChild(&pid_); }

StatusOr<std::pair<int, std::string>> EmulatorProcess::Request(const std::string& method,
                                                               const std::string& path,
                                                               const std::string& body) {
  auto reply = HttpOnce(method, "http://" + host_port() + path, {}, body, "application/json", 5000);
  if (!reply.ok()) return reply.status();
  return std::make_pair(reply->status, reply->body);
}

Status EmulatorProcess::SetFaults(const nlohmann::json& faults) {
  auto reply = Request("PUT", "/emulator/v1/faults", faults.dump());
  if (!reply.ok()) return reply.status();
  if (reply->first != 200) return InternalError("set faults: " + reply->second);
  return OkStatus();
}

StatusOr<nlohmann::json> EmulatorProcess::Stats() {
  auto reply = Request("GET", "/emulator/v1/stats");
  if (!reply.ok()) return reply.status();
  return nlohmann::json::parse(reply->second, nullptr, false);
}

std::unique_ptr<FirestoreStore> OpenEmulatorStore(const std::string& host_port,
                                                  const std::string& project,
                                                  int64_t request_timeout_ms,
                                                  int64_t overall_deadline_ms,
                                                  int64_t hedge_after_ms) {
  FirestoreStoreOptions options;
  if (hedge_after_ms >= 0) options.hedge_after_ms = hedge_after_ms;
  options.project_id = project;
  options.endpoint = "http://" + host_port;
  options.request_timeout_ms = request_timeout_ms;
  options.overall_deadline_ms = overall_deadline_ms;
  options.initial_backoff_ms = 10;
  options.max_backoff_ms = 200;
  auto store = FirestoreStore::Open(std::move(options));
  if (!store.ok()) return nullptr;
  return std::move(store).value();
}

void DamageSnapshotSequence(EmulatorProcess* emulator, const std::string& project,
                            const std::string& agent, const std::string& checkpoint_id) {
  ASSERT_NE(emulator, nullptr);
  std::string doc = "/v1/projects/" + project + "/databases/(default)/documents/checkpoints/" +
                    agent + "/snapshots/" + checkpoint_id;
  auto r = emulator->Request("PATCH", doc + "?updateMask.fieldPaths=sequenceNumber",
                             R"({"fields":{"sequenceNumber":{"stringValue":"damaged"}}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->first, 200) << r->second;
}

}  // namespace agentckpt::testing
