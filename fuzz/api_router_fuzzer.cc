// Fuzzes the sidecar's HTTP API (ApiRouter) with arbitrary method, path, query and body, against
// a real ContextState, CheckpointWriter and SQLite store in a temporary directory.
//
// Input layout: byte 0 picks the method, byte 1 the path (a known endpoint, or raw bytes from
// the input when it is 0xff), byte 2 a "limit" query value; the rest is the body.
// Invariants: nothing crashes or leaks; every response body except /metrics is valid JSON, and
// every error response is {"error":{"code","message","field"}}; a rejected request (status >= 400)
// leaves the context (its JSON form and revision) exactly as it was.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/fake_env.h"
#include "context/checkpoint_writer.h"
#include "context/context_state.h"
#include "http/api_router.h"
#include "observability/metrics.h"
#include "store/sqlite/sqlite_store.h"

namespace {

using namespace agentckpt;
using nlohmann::json;

void Require(bool ok, const char* what, const ApiRequest& req, const ApiResponse& resp) {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s\n%s %s -> %d\n%s\n", what, req.method.c_str(),
               req.path.c_str(), resp.status, resp.body.c_str());
  std::abort();
}

// Everything one fuzzing process shares across inputs (the store and context persist, so
// sequences of requests build up state as a running sidecar does).
struct World {
  std::filesystem::path dir;
  FakeEnv env;
  std::unique_ptr<SqliteStore> store;
  ContextState context;
  Metrics metrics;
  std::unique_ptr<CheckpointWriter> writer;
  std::unique_ptr<ApiRouter> router;

  World() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base != nullptr ? base : "/tmp") + "/api_fuzz_XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) std::abort();
    dir = templ;
    SqliteStoreOptions options;
    options.env = &env;
    auto opened = SqliteStore::Open((dir / "store.db").string(), options);
    if (!opened.ok()) {
      std::fprintf(stderr, "cannot open store: %s\n", opened.status().ToString().c_str());
      std::abort();
    }
    store = std::move(*opened);
    WriterOptions wo;
    wo.agent_id = "fuzz-agent";
    wo.keep = 4;
    writer = std::make_unique<CheckpointWriter>(&env, store.get(), &context, &metrics, wo,
                                                PositionReader(), WorkspaceReader(),
                                                [](const std::string&, const json&) {});
    ApiDeps deps;
    deps.agent_id = "fuzz-agent";
    deps.context = &context;
    deps.writer = writer.get();
    deps.store = store.get();
    deps.metrics = &metrics;
    deps.body_max_bytes = 64 * 1024;
    deps.readiness = [] { return json{{"ready", true}}; };
    router = std::make_unique<ApiRouter>(std::move(deps));
  }
  ~World() {
    router.reset();
    writer.reset();
    store.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

World& TheWorld() {
  static World* world = [] {
    auto* w = new World();
    std::atexit([] { delete &TheWorld(); });
    return w;
  }();
  return *world;
}

constexpr const char* kMethods[] = {"GET", "PUT", "PATCH", "POST", "DELETE", "HEAD"};
constexpr const char* kPaths[] = {
    "/v1/context",     "/v1/context",     "/v1/context",        "/v1/tool-calls",
    "/v1/tool-calls",  "/v1/checkpoints", "/v1/checkpoints/",   "/v1/checkpoints/x/y",
    "/healthz",        "/readyz",         "/metrics",           "/v1/restore",
    "/v1/restoration", "/nope",           "/v1/checkpoints/cp", "/v1/checkpoints"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  World& w = TheWorld();
  ApiRequest req;
  req.method = kMethods[data[0] % std::size(kMethods)];
  std::string_view rest(reinterpret_cast<const char*>(data + 3), size - 3);
  if (data[1] == 0xff) {
    size_t cut = rest.find('\n');
    req.path = std::string(rest.substr(0, cut));
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
  } else {
    req.path = kPaths[data[1] % std::size(kPaths)];
  }
  if (data[2] != 0) req.query["limit"] = std::to_string(static_cast<int>(data[2]) - 128);
  req.body = std::string(rest);

  const json before = w.context.ToJson();
  const uint64_t revision_before = w.context.Snapshot().revision;
  ApiResponse resp = w.router->Handle(req);

  Require(resp.status >= 200 && resp.status < 600, "status is an HTTP status", req, resp);
  if (req.path == "/metrics" && resp.status == 200) return 0;
  json body = json::parse(resp.body, nullptr, /*allow_exceptions=*/false);
  Require(!body.is_discarded(), "the response is valid JSON", req, resp);
  if (resp.status >= 400) {
    Require(body.is_object() && body.contains("error") && body["error"].is_object() &&
                body["error"].value("code", json()).is_string() &&
                body["error"].value("message", json()).is_string() &&
                body["error"].value("field", json()).is_string(),
            "an error has code, message and field", req, resp);
    Require(w.context.ToJson() == before, "a rejected request leaves the context as it was", req,
            resp);
    Require(w.context.Snapshot().revision == revision_before,
            "a rejected request leaves the revision as it was", req, resp);
  }
  return 0;
}
