// The client's floor for sidecar_http_bench: the same Node client run against a server that does
// no work, so that a round trip can be split into what the client and the transport cost by
// themselves and what the checkpoint adds.
//
// ZeroWorkServer is the sidecar's own HTTP server (http/http_server.h: Boost.Beast, one thread per
// connection, keep-alive) with a handler that answers at once with bodies captured from the real
// sidecar: POST /v1/checkpoints gets 201 and the sidecar's last checkpoint reply, GET /healthz
// gets 200 and its health reply. No store, no NATS, no router: the client parses the same JSON as
// against the sidecar, so its own share of a round trip is what is left.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace agentckpt::bench {

class ZeroWorkServer {
 public:
  // `checkpoint_reply` and `healthz_reply` are the bodies answered (JSON text).
  ZeroWorkServer(std::string checkpoint_reply, std::string healthz_reply);
  ~ZeroWorkServer();
  // Listens on 127.0.0.1 on a free port; false (saying why on stderr) if it cannot.
  bool Start();
  int port() const;

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

// Runs bench/sidecar/node_checkpoint_client.mjs (in `bench_dir`) against 127.0.0.1:`port` with
// `calls` calls over `transport` ("fetch" or "http") and returns its JSON line; nullopt, with
// the reason in `*why`, when node is not on PATH or the client fails. Node flags in the
// environment variable AGENTCKPT_BENCH_NODE_FLAGS (for example --no-opt) go before the script;
// the client reports them as "execArgv".
std::optional<nlohmann::json> RunNodeClient(const std::string& bench_dir, int port, int calls,
                                            const std::string& transport, std::string* why);

}  // namespace agentckpt::bench
