#include "bench/sidecar/client_floor.h"

#include <cstdio>
#include <cstdlib>

#include "http/http_handler.h"
#include "http/http_server.h"

namespace agentckpt::bench {
namespace {

// Answers the two requests the Node client makes, at once; anything else 404.
class ZeroWorkHandler : public HttpHandler {
 public:
  ZeroWorkHandler(std::string checkpoint_reply, std::string healthz_reply)
      : checkpoint_reply_(std::move(checkpoint_reply)), healthz_reply_(std::move(healthz_reply)) {}
  ApiResponse Handle(const ApiRequest& request) override {
    ApiResponse r;
    if (request.method == "POST" && request.path == "/v1/checkpoints") {
      r.status = 201;
      r.body = checkpoint_reply_;
    } else if (request.method == "GET" && request.path == "/healthz") {
      r.body = healthz_reply_;
    } else {
      r.status = 404;
      r.body = R"({"code":"NOT_FOUND"})";
    }
    return r;
  }
  bool Authorized(const ApiRequest&) const override { return true; }

 private:
  std::string checkpoint_reply_, healthz_reply_;
};

}  // namespace

struct ZeroWorkServer::Parts {
  ZeroWorkHandler handler;
  HttpServer server;
  Parts(std::string checkpoint_reply, std::string healthz_reply)
      : handler(std::move(checkpoint_reply), std::move(healthz_reply)),
        server("127.0.0.1", 0, 1 << 20, &handler) {}
};

ZeroWorkServer::ZeroWorkServer(std::string checkpoint_reply, std::string healthz_reply)
    : parts_(std::make_unique<Parts>(std::move(checkpoint_reply), std::move(healthz_reply))) {}

ZeroWorkServer::~ZeroWorkServer() { parts_->server.Stop(); }

bool ZeroWorkServer::Start() {
  Status s = parts_->server.Start();
  if (!s.ok()) std::fprintf(stderr, "zero-work server: %s\n", s.ToString().c_str());
  return s.ok();
}

int ZeroWorkServer::port() const { return parts_->server.port(); }

std::optional<nlohmann::json> RunNodeClient(const std::string& bench_dir, int port, int calls,
                                            const std::string& transport, std::string* why) {
  const char* flags = std::getenv("AGENTCKPT_BENCH_NODE_FLAGS");
  std::string cmd = std::string("node ") + (flags != nullptr ? flags : "") + " '" + bench_dir +
                    "/node_checkpoint_client.mjs' " + std::to_string(port) + " " +
                    std::to_string(calls) + " " + transport + " 2>&1";
  FILE* node = ::popen(cmd.c_str(), "r");
  if (node == nullptr) {
    *why = "cannot start node";
    return std::nullopt;
  }
  std::string out;
  char buf[65536];
  while (size_t n = std::fread(buf, 1, sizeof buf, node)) out.append(buf, n);
  int rc = ::pclose(node);
  auto j = nlohmann::json::parse(out, nullptr, false);
  if (rc != 0 || !j.is_object()) {
    *why = out.substr(0, 200);
    return std::nullopt;
  }
  return j;
}

}  // namespace agentckpt::bench
