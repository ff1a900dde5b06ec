// NatsClusterProcess: a real 3-node NATS JetStream cluster on loopback for tests of R3 streams.
// Three `nats-server` processes (server names n1, n2, n3; cluster "agentckpt-test"), each with its
// own client port, cluster port and TempDir holding its config file, log and JetStream store, each
// routed to the other two. Started in the constructor (bounded wait until every server accepts
// connections and the JetStream meta group can place an R3 stream), stopped by pid in the
// destructor. Kill() / Restart() of one server support failover tests.
//
// Servers are numbered 0..size()-1: server i is named "n<i+1>" (the name JetStream reports as a
// stream's leader).
//
// Thread-safety: ports and directories never change after the constructor, so url(), dir(),
// IndexOfName(), StreamLeader() and WaitForStreamHealthy() may run on any thread at any time.
// pid(), running(), Kill() and Restart() are not thread-safe: call them from the test's thread.
// A server is killed by the kernel when the thread that started it (constructor or Restart)
// ends, so a test binary killed by a timeout leaves no servers behind.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <string>

#include "common/status.h"
#include "nats/nats_handles.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {

class NatsClusterProcess {
 public:
  static constexpr int kSize = 3;

  // Starts the three servers (ports picked below the kernel's ephemeral port range) and waits
  // until each accepts client and route connections (at most 10 s each) and then until an R3
  // stream can be created (at most 30 s: the JetStream meta group has a leader that knows every
  // peer). A server that exits at start (a port taken by another process) starts the cluster
  // again on new ports, at most 5 attempts. Aborts the test binary with the servers' logs if the
  // cluster does not get ready.
  NatsClusterProcess();
  // SIGKILLs and reaps every running server; on a failed test prints the tail of each log.
  ~NatsClusterProcess();
  NatsClusterProcess(const NatsClusterProcess&) = delete;
  NatsClusterProcess& operator=(const NatsClusterProcess&) = delete;

  // "nats://127.0.0.1:P1,nats://127.0.0.1:P2,nats://127.0.0.1:P3": every server, for a client
  // that fails over. natsConnection_ConnectTo and NewClusterNatsOptions take the comma list;
  // natsOptions_SetURL (so NewNatsOptions, ConnectNatsUrl) does not: nats.c 3.4 takes the whole
  // string as one URL and cannot connect.
  std::string url() const;
  // "nats://127.0.0.1:Pi": server i only (also while it is killed). Aborts if i is out of range (as
  // every per-server method).
  std::string url(int i) const;
  int size() const { return kSize; }
  // The pid of server i, -1 while it is not running. Not thread-safe (Kill, Restart).
  pid_t pid(int i) const;
  // True while server i runs (started and not killed by Kill()). Not thread-safe.
  bool running(int i) const;
  // Server i's directory: config (nats-server.conf), log (nats-server.log), JetStream store.
  const std::string& dir(int i) const;
  // Index of the server named `name` ("n1" -> 0), -1 if none.
  int IndexOfName(const std::string& name) const;

  // SIGKILLs server i and reaps it, then holds its two ports (bound, not listening) until
  // Restart(i). No-op if it is not running. Not thread-safe.
  void Kill(int i);
  // Starts server i again on the same ports and store directory (killing it first if it runs)
  // and waits (at most 10 s) until it accepts client and route connections. Does not wait for
  // JetStream to catch up: see WaitForStreamHealthy. Aborts with the logs if it cannot start.
  // Not thread-safe; call it from the test's thread (see the class comment).
  void Restart(int i);

  // The index of the server that currently leads `stream` (jsStreamInfo Cluster->Leader). Asks
  // the cluster through url() once (2 s request timeout). kNotFound if the stream does not exist,
  // kUnavailable if it has no leader now or no server answered (while a stream has no leader,
  // nats-server 2.9 does not answer stream info: this takes the 2 s), kInternal for an unknown
  // leader name. Thread-safe.
  StatusOr<int> StreamLeader(const std::string& stream);

  // Asks the leader of `stream` to step down ($JS.API.STREAM.LEADER.STEPDOWN) until server i
  // leads it (each election picks a random current replica), waiting for each new leader.
  // kDeadlineExceeded after `timeout_ms` with the leader last seen. Thread-safe.
  Status MoveStreamLeader(const std::string& stream, int i, int timeout_ms);

  // Waits until `stream` has a leader and `replicas` - 1 other replicas that are current and
  // online, polling stream info through url(). kDeadlineExceeded with the last state seen after
  // `timeout_ms`; kFailedPrecondition if the stream is not configured with `replicas` replicas.
  // nats-server 2.9 reports a killed replica as not current but not offline. Thread-safe.
  Status WaitForStreamHealthy(const std::string& stream, int replicas, int timeout_ms);

 private:
  struct Server {
    TempDir dir;
    int client_port = 0;
    int cluster_port = 0;
    pid_t pid = -1;
    // Sockets bound to the two ports while the server does not run (see ReservePorts).
    std::array<int, 2> reserved_fds = {-1, -1};
  };

  // Picks kSize * 2 distinct free loopback ports outside the kernel's ephemeral range, reserves
  // them, and writes every server's config file.
  void AssignPortsAndWriteConfigs();
  // Binds server i's client and cluster ports (not listening) while it is down, so neither a
  // kernel-chosen port nor another fixture's pick takes them before Restart; Start releases them.
  void ReservePorts(int i);
  void ReleasePorts(int i);
  void ReleaseAllPorts();
  // Kills every server and releases every reservation.
  void KillAll();
  // Starts server i with its config; true once this process logged that it listens for clients
  // and routes, false if it exited (e.g. a port was taken) or was not ready by `timeout_ms`.
  bool Start(int i, int timeout_ms);
  // Creates and deletes an R3 memory stream until it works or `timeout_ms` passes.
  Status WaitForJetStream(int timeout_ms);
  // Prints the last `keep` bytes of every server's log to stderr.
  void DumpLogs(size_t keep) const;
  void CheckIndex(int i) const;

  std::string nats_server_path_;
  std::array<Server, kSize> servers_;
};

// New nats.c options whose server pool is every URL in the comma-separated `url_list` (e.g.
// NatsClusterProcess::url()), via natsOptions_SetServers; everything else is nats.c's default
// (reconnects allowed), for the caller to change. kInvalidArgument if the list is empty or
// nats.c refuses it, kInternal if nats.c cannot allocate. Thread-safe.
StatusOr<nats_handles::OptionsPtr> NewClusterNatsOptions(const std::string& url_list);

}  // namespace agentckpt::testing
