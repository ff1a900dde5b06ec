#include "tests/support/nats_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "nats/nats_handles.h"
#include "tests/support/nats_server.h"

namespace agentckpt::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kClusterName[] = "agentckpt-test";
// The stream WaitForJetStream creates (R3, memory) and deletes to prove the cluster is usable.
constexpr char kReadyStream[] = "AGENTCKPT_CLUSTER_READY";
constexpr int kStartAttempts = 5;
constexpr int kStartTimeoutMs = 10000;
constexpr int kJetStreamReadyTimeoutMs = 30000;
constexpr int kRestartTimeoutMs = 10000;
// The longest a single nats.c request (connect, stream info, add/delete stream) may take.
constexpr int kRequestTimeoutMs = 2000;
constexpr int kPollIntervalMs = 50;

std::string ServerName(int i) { return "n" + std::to_string(i + 1); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

int64_t RemainingMs(Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
}

// The absolute path of `name` found in $PATH (so the child only calls execv), empty if none.
std::string FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// A TCP socket bound (not listening) to 127.0.0.1:port, -1 if the port is in use. With
// `reuse_addr` the bind ignores connections in TIME_WAIT on the port (a killed server leaves
// those); without it, it also fails on those, which makes a stricter test of a new port.
int BindLoopback(int port, bool reuse_addr) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  if (reuse_addr) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The ports to pick from: below the kernel's ephemeral range (ip_local_port_range) when there is
// room, else above it. The kernel gives ports of that range to every outgoing connection and to
// bind(port 0), so a server's port there can be taken while the server is down (Restart).
std::pair<int, int> NonEphemeralPortRange() {
  int lo = 32768, hi = 60999;
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  in >> lo >> hi;
  constexpr int kMinPort = 10000, kMinSpan = 2000;
  if (lo - 1 - kMinPort >= kMinSpan) return {kMinPort, lo - 1};
  if (65535 - (hi + 1) >= kMinSpan) return {hi + 1, 65535};
  return {0, 0};  // no room: let the kernel choose (bind to port 0)
}

// nats.c's status, JetStream error code and last error text, as a Status.
Status NatsError(natsStatus s, const std::string& what, jsErrCode jerr = jsErrCode(0)) {
  std::string message = what + ": " + natsStatus_GetText(s);
  if (jerr != 0) message += " (JetStream error " + std::to_string(jerr) + ")";
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  if (detail != nullptr && *detail != '\0') message += std::string(": ") + detail;
  if (s == NATS_NOT_FOUND) return NotFoundError(message);
  return UnavailableError(message);
}

jsOptions WaitOptions(int64_t wait_ms) {
  jsOptions opts;
  jsOptions_Init(&opts);
  opts.Wait = std::max<int64_t>(1, wait_ms);
  return opts;
}

// One connection (no reconnects) to any server in `url` with a JetStream context.
struct JsClient {
  nats_handles::ConnectionPtr nc;
  nats_handles::JsCtxPtr js;
};

StatusOr<JsClient> ConnectJs(const std::string& url, int timeout_ms) {
  ASSIGN_OR_RETURN(nats_handles::OptionsPtr opts, NewClusterNatsOptions(url));
  natsOptions_SetName(opts.get(), "agentckpt-cluster-fixture");
  natsOptions_SetTimeout(opts.get(), std::clamp(timeout_ms, 1, kRequestTimeoutMs));
  natsOptions_SetAllowReconnect(opts.get(), false);
  natsConnection* raw = nullptr;
  natsStatus s = natsConnection_Connect(&raw, opts.get());
  nats_handles::ConnectionPtr nc(raw);
  if (s != NATS_OK) return NatsError(s, "connect to " + url);
  jsCtx* js = nullptr;
  jsOptions js_opts = WaitOptions(kRequestTimeoutMs);
  s = natsConnection_JetStream(&js, nc.get(), &js_opts);
  if (s != NATS_OK) return NatsError(s, "JetStream context");
  return JsClient{std::move(nc), nats_handles::JsCtxPtr(js)};
}

StatusOr<nats_handles::StreamInfoPtr> GetStreamInfo(jsCtx* js, const std::string& stream,
                                                    int64_t wait_ms) {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = jsErrCode(0);
  jsOptions opts = WaitOptions(wait_ms);
  natsStatus s = js_GetStreamInfo(&si, js, stream.c_str(), &opts, &jerr);
  nats_handles::StreamInfoPtr info(si);
  if (s != NATS_OK) return NatsError(s, "stream info " + stream, jerr);
  if (info == nullptr) return UnavailableError("stream info " + stream + ": empty answer");
  return info;
}

// "leader=n2 n1(current) n3(offline, lag 4)" for messages.
std::string DescribeCluster(const jsStreamInfo& si) {
  const jsClusterInfo* c = si.Cluster;
  if (c == nullptr) return "no cluster info";
  std::string text = std::string("leader=") + (c->Leader != nullptr ? c->Leader : "(none)");
  for (int r = 0; r < c->ReplicasLen; ++r) {
    const jsPeerInfo* p = c->Replicas[r];
    text += std::string(" ") + (p->Name != nullptr ? p->Name : "?") + "(";
    text += p->Current ? "current" : "not current";
    if (p->Offline) text += ", offline";
    text += ", lag " + std::to_string(p->Lag) + ")";
  }
  return text;
}

}  // namespace

StatusOr<nats_handles::OptionsPtr> NewClusterNatsOptions(const std::string& url_list) {
  std::vector<std::string> urls;
  std::istringstream in(url_list);
  for (std::string one; std::getline(in, one, ',');) {
    one.erase(0, one.find_first_not_of(' '));
    one.erase(one.find_last_not_of(' ') + 1);
    if (!one.empty()) urls.push_back(one);
  }
  if (urls.empty()) return InvalidArgumentError("no server URL in \"" + url_list + "\"");
  std::vector<const char*> servers;
  for (const std::string& u : urls) servers.push_back(u.c_str());
  natsOptions* raw = nullptr;
  if (natsOptions_Create(&raw) != NATS_OK) return InternalError("natsOptions_Create failed");
  nats_handles::OptionsPtr opts(raw);
  natsStatus s =
      natsOptions_SetServers(opts.get(), servers.data(), static_cast<int>(servers.size()));
  if (s != NATS_OK) {
    return InvalidArgumentError("server list \"" + url_list + "\": " + natsStatus_GetText(s));
  }
  return opts;
}

NatsClusterProcess::NatsClusterProcess() : nats_server_path_(FindInPath("nats-server")) {
  if (nats_server_path_.empty()) {
    std::fprintf(stderr, "NatsClusterProcess: nats-server is not in PATH\n");
    std::abort();
  }
  // The ports stay reserved until each server starts, but another process may still bind one
  // it chose itself with SO_REUSEADDR; that server exits and the whole cluster is started again
  // on new ports (every config names every route port).
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    if (attempt > 0) {
      KillAll();
      for (int i = 0; i < kSize; ++i) {
        std::error_code ec;
        std::filesystem::remove_all(servers_[i].dir.File("jetstream"), ec);
      }
    }
    AssignPortsAndWriteConfigs();
    bool started = true;
    for (int i = 0; i < kSize && started; ++i) started = Start(i, kStartTimeoutMs);
    if (!started) continue;
    Status ready = WaitForJetStream(kJetStreamReadyTimeoutMs);
    if (ready.ok()) return;
    DumpLogs(8000);
    KillAll();
    std::fprintf(stderr, "NatsClusterProcess: JetStream cluster not ready: %s\n",
                 ready.ToString().c_str());
    std::abort();
  }
  DumpLogs(8000);
  KillAll();
  std::fprintf(stderr, "NatsClusterProcess: nats-server cluster did not start in %d attempts\n",
               kStartAttempts);
  std::abort();
}

NatsClusterProcess::~NatsClusterProcess() {
  KillAll();
  if (::testing::Test::HasFailure()) DumpLogs(4000);
}

std::string NatsClusterProcess::url() const {
  std::string list;
  for (int i = 0; i < kSize; ++i) list += (i > 0 ? "," : "") + url(i);
  return list;
}

std::string NatsClusterProcess::url(int i) const {
  CheckIndex(i);
  return "nats://127.0.0.1:" + std::to_string(servers_[i].client_port);
}

pid_t NatsClusterProcess::pid(int i) const {
  CheckIndex(i);
  return servers_[i].pid;
}

bool NatsClusterProcess::running(int i) const { return pid(i) > 0; }

const std::string& NatsClusterProcess::dir(int i) const {
  CheckIndex(i);
  return servers_[i].dir.path();
}

int NatsClusterProcess::IndexOfName(const std::string& name) const {
  for (int i = 0; i < kSize; ++i) {
    if (ServerName(i) == name) return i;
  }
  return -1;
}

void NatsClusterProcess::CheckIndex(int i) const {
  if (i < 0 || i >= kSize) {
    std::fprintf(stderr, "NatsClusterProcess: server index %d out of range [0, %d)\n", i, kSize);
    std::abort();
  }
}

void NatsClusterProcess::AssignPortsAndWriteConfigs() {
  // Each port is picked by binding it; the sockets stay bound (the reservation) until the server
  // is started, so the ports are distinct and nobody else gets them in the meantime.
  ReleaseAllPorts();
  const auto [lo, hi] = NonEphemeralPortRange();
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> candidate(lo, hi);
  std::vector<std::pair<int, int>> picked;  // {port, fd}
  for (int tries = 0; picked.size() < 2 * kSize && tries < 10000; ++tries) {
    int port = lo == 0 ? 0 : candidate(random);
    int fd = BindLoopback(port, /*reuse_addr=*/false);
    if (fd < 0) continue;
    sockaddr_in addr{};
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    picked.emplace_back(ntohs(addr.sin_port), fd);
  }
  if (picked.size() < 2 * kSize) {
    std::fprintf(stderr, "NatsClusterProcess: no %d free loopback ports in [%d, %d]\n", 2 * kSize,
                 lo, hi);
    std::abort();
  }
  for (int i = 0; i < kSize; ++i) {
    servers_[i].client_port = picked[2 * i].first;
    servers_[i].reserved_fds = {picked[2 * i].second, picked[2 * i + 1].second};
    servers_[i].cluster_port = picked[2 * i + 1].first;
  }
  for (int i = 0; i < kSize; ++i) {
    std::ostringstream conf;
    conf << "server_name: \"" << ServerName(i) << "\"\n"
         << "listen: \"127.0.0.1:" << servers_[i].client_port << "\"\n"
         << "jetstream {\n  store_dir: \"" << servers_[i].dir.path() << "\"\n}\n"
         << "cluster {\n  name: \"" << kClusterName << "\"\n"
         << "  listen: \"127.0.0.1:" << servers_[i].cluster_port << "\"\n  routes: [\n";
    for (int j = 0; j < kSize; ++j) {
      if (j != i) conf << "    \"nats-route://127.0.0.1:" << servers_[j].cluster_port << "\"\n";
    }
    conf << "  ]\n}\n";
    std::ofstream out(servers_[i].dir.File("nats-server.conf"), std::ios::trunc);
    out << conf.str();
    if (!out.flush()) {
      std::fprintf(stderr, "NatsClusterProcess: cannot write %s\n",
                   servers_[i].dir.File("nats-server.conf").c_str());
      std::abort();
    }
  }
}

bool NatsClusterProcess::Start(int i, int timeout_ms) {
  Server& server = servers_[i];
  const std::string log = server.dir.File("nats-server.log");
  const size_t log_offset = ReadFile(log).size();
  // Everything the child needs is prepared here: between fork and exec a multi-threaded parent
  // (nats.c runs threads) may only make async-signal-safe calls, so no allocation or stdio.
  std::string conf = server.dir.File("nats-server.conf");
  std::string arg0 = "nats-server", arg1 = "-c";
  char* argv[] = {arg0.data(), arg1.data(), conf.data(), nullptr};
  int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    std::perror(("NatsClusterProcess: open " + log).c_str());
    std::abort();
  }
  // The reservation ends just before the server binds its ports.
  ReleasePorts(i);
  const pid_t parent = ::getpid();
  pid_t child = ::fork();
  if (child < 0) {
    std::perror("NatsClusterProcess: fork");
    std::abort();
  }
  if (child == 0) {
    // The server dies with the thread that started it, so a test binary killed by a timeout
    // leaves no servers behind.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    // The test's own sockets (nats.c connections) must not stay open in the server.
    ::close_range(3, ~0U, 0);
    ::execv(nats_server_path_.c_str(), argv);
    ::_exit(127);
  }
  ::close(log_fd);
  server.pid = child;
  // Ready means OUR process says it listens for clients and routes: another process may be
  // listening on the port, and nats-server reports "Server is ready" before it binds the route
  // port (a taken route port makes it exit afterwards).
  const std::string route_line =
      "Listening for route connections on 127.0.0.1:" + std::to_string(server.cluster_port);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(server.pid, &status, WNOHANG) == server.pid) {
      server.pid = -1;
      return false;  // exited: e.g. a port was taken
    }
    std::string text = ReadFile(log);
    if (text.size() > log_offset && text.find("Server is ready", log_offset) != std::string::npos &&
        text.find(route_line, log_offset) != std::string::npos &&
        WaitForPort(server.client_port, 100)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Kill(i);
  return false;
}

Status NatsClusterProcess::WaitForJetStream(int timeout_ms) {
  // Two steps. (1) Account info until it is answered: the JetStream meta group has a leader. A
  // request sent before the election is dropped, not refused, so these requests wait briefly and
  // are repeated (read-only, so a repeat is harmless). (2) An R3 stream is created and deleted:
  // it can only be placed once the meta leader knows all three peers, which a meta leader alone
  // does not prove. A refusal (e.g. insufficient resources while a peer is missing) is answered
  // at once and retried; creating the same stream again is idempotent.
  constexpr int64_t kLeaderProbeMs = 250;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  Status last = DeadlineExceededError("no attempt made");
  bool meta_leader = false;
  bool created = false;
  std::optional<JsClient> client;
  while (RemainingMs(deadline) > 0) {
    if (!client.has_value()) {
      StatusOr<JsClient> connected = ConnectJs(url(), static_cast<int>(RemainingMs(deadline)));
      if (connected.ok()) {
        client.emplace(std::move(connected).value());
      } else {
        last = connected.status();
      }
    }
    if (client.has_value()) {
      jsErrCode jerr = jsErrCode(0);
      if (!meta_leader) {
        jsOptions opts = WaitOptions(std::min<int64_t>(kLeaderProbeMs, RemainingMs(deadline)));
        jsAccountInfo* ai = nullptr;
        natsStatus s = js_GetAccountInfo(&ai, client->js.get(), &opts, &jerr);
        jsAccountInfo_Destroy(ai);
        if (s == NATS_OK) {
          meta_leader = true;
        } else {
          last = NatsError(s, "JetStream account info (meta leader)", jerr);
        }
      }
      jsOptions opts = WaitOptions(std::min<int64_t>(kRequestTimeoutMs, RemainingMs(deadline)));
      if (meta_leader && !created) {
        jsStreamConfig config;
        jsStreamConfig_Init(&config);
        config.Name = kReadyStream;
        config.Storage = js_MemoryStorage;
        config.Replicas = kSize;
        jsStreamInfo* si = nullptr;
        natsStatus s = js_AddStream(&si, client->js.get(), &config, &opts, &jerr);
        jsStreamInfo_Destroy(si);
        if (s == NATS_OK) {
          created = true;
        } else {
          last = NatsError(s, std::string("create R3 stream ") + kReadyStream, jerr);
        }
      }
      if (created) {
        natsStatus s = js_DeleteStream(client->js.get(), kReadyStream, &opts, &jerr);
        // Not found: an earlier delete whose answer was lost did it.
        if (s == NATS_OK || s == NATS_NOT_FOUND) return OkStatus();
        last = NatsError(s, std::string("delete stream ") + kReadyStream, jerr);
      }
      if (natsConnection_Status(client->nc.get()) != NATS_CONN_STATUS_CONNECTED) client.reset();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollIntervalMs));
  }
  return DeadlineExceededError("after " + std::to_string(timeout_ms) + " ms: " + last.ToString());
}

void NatsClusterProcess::Kill(int i) {
  CheckIndex(i);
  Server& server = servers_[i];
  if (server.pid <= 0) return;
  ::kill(server.pid, SIGKILL);
  int status = 0;
  ::waitpid(server.pid, &status, 0);
  server.pid = -1;
  ReservePorts(i);
}

void NatsClusterProcess::ReservePorts(int i) {
  Server& server = servers_[i];
  ReleasePorts(i);
  // SO_REUSEADDR: the connections the killed server had are in TIME_WAIT on its ports. Best
  // effort: a port somebody took anyway makes Restart try again until its deadline.
  server.reserved_fds = {BindLoopback(server.client_port, /*reuse_addr=*/true),
                         BindLoopback(server.cluster_port, /*reuse_addr=*/true)};
}

void NatsClusterProcess::ReleasePorts(int i) {
  for (int& fd : servers_[i].reserved_fds) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

void NatsClusterProcess::ReleaseAllPorts() {
  for (int i = 0; i < kSize; ++i) ReleasePorts(i);
}

void NatsClusterProcess::KillAll() {
  for (int i = 0; i < kSize; ++i) Kill(i);
  ReleaseAllPorts();
}

void NatsClusterProcess::Restart(int i) {
  Kill(i);
  // Kill reserved the ports, so they are normally free; if one was taken before (its holder gone
  // soon), a start that exits is tried again until the deadline.
  const auto deadline = Clock::now() + std::chrono::milliseconds(kRestartTimeoutMs);
  while (RemainingMs(deadline) > 0) {
    if (Start(i, static_cast<int>(RemainingMs(deadline)))) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  DumpLogs(8000);
  KillAll();
  std::fprintf(stderr, "NatsClusterProcess: %s did not restart on ports %d/%d within %d ms\n",
               ServerName(i).c_str(), servers_[i].client_port, servers_[i].cluster_port,
               kRestartTimeoutMs);
  std::abort();
}

StatusOr<int> NatsClusterProcess::StreamLeader(const std::string& stream) {
  ASSIGN_OR_RETURN(JsClient client, ConnectJs(url(), kRequestTimeoutMs));
  ASSIGN_OR_RETURN(nats_handles::StreamInfoPtr info,
                   GetStreamInfo(client.js.get(), stream, kRequestTimeoutMs));
  if (info->Cluster == nullptr || info->Cluster->Leader == nullptr ||
      *info->Cluster->Leader == '\0') {
    return UnavailableError("stream " + stream + " has no leader now");
  }
  int index = IndexOfName(info->Cluster->Leader);
  if (index < 0) {
    return InternalError("stream " + stream + " is led by unknown server " + info->Cluster->Leader);
  }
  return index;
}

Status NatsClusterProcess::MoveStreamLeader(const std::string& stream, int i, int timeout_ms) {
  const std::string want = ServerName(i);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string last = "not asked yet";
  while (RemainingMs(deadline) > 0) {
    StatusOr<int> leader = StreamLeader(stream);
    if (leader.ok() && *leader == i) return OkStatus();
    last = leader.ok() ? ServerName(*leader) : leader.status().ToString();
    if (leader.ok()) {
      StatusOr<JsClient> client = ConnectJs(url(), kRequestTimeoutMs);
      if (client.ok()) {
        natsMsg* reply = nullptr;
        natsConnection_RequestString(&reply, client->nc.get(),
                                     ("$JS.API.STREAM.LEADER.STEPDOWN." + stream).c_str(), "",
                                     kRequestTimeoutMs);
        natsMsg_Destroy(reply);
      }
    }
    // The election that follows a step-down takes a moment; the next StreamLeader sees its end.
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollIntervalMs));
  }
  return DeadlineExceededError("stream " + stream + " is not led by " + want + " after " +
                               std::to_string(timeout_ms) + " ms; last leader: " + last);
}

Status NatsClusterProcess::WaitForStreamHealthy(const std::string& stream, int replicas,
                                                int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string last = "no answer yet";
  std::optional<JsClient> client;
  while (RemainingMs(deadline) > 0) {
    if (!client.has_value()) {
      StatusOr<JsClient> connected = ConnectJs(url(), static_cast<int>(RemainingMs(deadline)));
      if (connected.ok()) {
        client.emplace(std::move(connected).value());
      } else {
        last = connected.status().ToString();
      }
    }
    if (client.has_value()) {
      StatusOr<nats_handles::StreamInfoPtr> info =
          GetStreamInfo(client->js.get(), stream, std::min<int64_t>(1000, RemainingMs(deadline)));
      if (info.ok()) {
        const jsStreamInfo& si = **info;
        if (si.Config != nullptr && si.Config->Replicas != replicas) {
          return FailedPreconditionError("stream " + stream + " has " +
                                         std::to_string(si.Config->Replicas) +
                                         " replicas configured, not " + std::to_string(replicas));
        }
        const jsClusterInfo* c = si.Cluster;
        if (c != nullptr && c->Leader != nullptr && *c->Leader != '\0') {
          int current = 0;
          for (int r = 0; r < c->ReplicasLen; ++r) {
            if (c->Replicas[r]->Current && !c->Replicas[r]->Offline) ++current;
          }
          if (current >= replicas - 1) return OkStatus();
        }
        last = DescribeCluster(si);
      } else {
        last = info.status().ToString();
      }
      if (natsConnection_Status(client->nc.get()) != NATS_CONN_STATUS_CONNECTED) client.reset();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollIntervalMs));
  }
  return DeadlineExceededError("stream " + stream + " not healthy with " +
                               std::to_string(replicas) + " replicas after " +
                               std::to_string(timeout_ms) + " ms; last: " + last);
}

void NatsClusterProcess::DumpLogs(size_t keep) const {
  for (int i = 0; i < kSize; ++i) {
    std::string text = ReadFile(servers_[i].dir.File("nats-server.log"));
    std::fprintf(stderr, "--- nats-server %s log (client port %d, last %zu bytes) ---\n%s\n---\n",
                 ServerName(i).c_str(), servers_[i].client_port, keep,
                 text.substr(text.size() > keep ? text.size() - keep : 0).c_str());
  }
}

}  // namespace agentckpt::testing
