#include "console/console_command.h"

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <map>
#include <memory>

#include "cli/run_command.h"
#include "cli/terminal_output.h"
#include "console/console_api.h"
#include "http/http_server.h"
#include "sidecar/config.h"

namespace agentckpt {
namespace {

constexpr int64_t kBodyMaxBytes = 64 * 1024;  // a gate decision with its comment

// HOST:PORT (port 0-65535). kInvalidArgument naming --listen.
Status ParseListen(const std::string& addr, std::string* host, int* port) {
  size_t colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgumentError("--listen: expected HOST:PORT, got \"" + addr + "\"");
  }
  *host = addr.substr(0, colon);
  std::string p = addr.substr(colon + 1);
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), *port);
  if (ec != std::errc() || end != p.data() + p.size() || *port < 0 || *port > 65535) {
    return InvalidArgumentError("--listen: port must be 0-65535, got \"" + p + "\"");
  }
  return OkStatus();
}

bool IsLoopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]" ||
         host.rfind("127.", 0) == 0;
}

}  // namespace

ConsoleCommand::ConsoleCommand(CLI::App* app) {
  command_ = app->add_subcommand(
      "console", "Serve the web console: fleet, timelines, checkpoints, diffs, restore previews "
                 "and approval gates (read-only apart from gate decisions)");
  CLI::App* c = command_;
  AddStoreFlags(c, &store_);
  nats_flag_ = AddNatsClientFlags(c, &nats_);
  c->add_option("--timeout-ms", nats_.timeout_ms, "NATS connect, reply and replay timeout")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  c->add_option("--listen", listen_, "HOST:PORT to serve on (port 0: any free port)")
      ->capture_default_str();
  c->add_option("--fleet-cache-ms", fleet_row_max_age_ms_,
                "Longest a fleet row is reused while its agent shows no change (0: never)")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->capture_default_str();
  c->add_option("--http-token-file", token_file_,
                "Bearer token required on /api/ (default: $CKPT_HTTP_TOKEN_FILE, as the API)");
}

bool ConsoleCommand::Selected() const { return command_->parsed(); }

int ConsoleCommand::Execute() {
  std::map<std::string, std::string> given;
  if (!token_file_.empty()) given["http-token-file"] = token_file_;
  auto token = ResolveHttpToken(given, ProcessEnvLookup());
  if (!token.ok()) return ReportSettingError("console", token.status());
  auto restore = ResolveRestoreSettings({}, ProcessEnvLookup());
  if (!restore.ok()) return ReportSettingError("console", restore.status());
  std::string host;
  int port = 0;
  if (Status s = ParseListen(listen_, &host, &port); !s.ok()) return ReportError("console", s);
  if (Status s = CheckNatsClientOptions(nats_); !s.ok()) return ReportError("console", s);
  // One store for every agent: the per-agent default (sqlite://agentckpt-data/ID.db) does not
  // apply.
  if (StoreUrlFromFlags(store_, "") == StoreUrlFromFlags(store_, "-")) {
    // given by --store or $CKPT_STORE
  } else {
    return ReportError("console", InvalidArgumentError("--store (or $CKPT_STORE) is required"));
  }
  auto store = OpenStoreFromFlags(store_, "");
  if (!store.ok()) return ReportError("console", store.status());
  if (Status ping = (*store)->Ping(); !ping.ok()) return ReportError("console", ping);

  ConsoleOptions options;
  options.bearer_token = *token;
  options.nats = nats_;
  options.replay = nats_flag_->count() > 0;
  options.restore = *restore;
  options.fleet_row_max_age_ms = fleet_row_max_age_ms_;
  CheckpointStore* raw = store->get();
  options.decision_store = [raw]() -> StatusOr<CheckpointStore*> { return raw; };
  ConsoleApi api(raw, std::move(options));

  // Signals are taken by sigwait below; the server's threads inherit the mask.
  sigset_t signals = BlockStopSignals();
  HttpServer server(host, port, kBodyMaxBytes, &api);
  if (Status s = server.Start(); !s.ok()) return ReportError("console", s);
  if (!IsLoopback(host) && token->empty()) {
    std::fprintf(stderr,
                 "agentckpt console: warning: listening on %s without a token "
                 "(--http-token-file): anyone who can reach it can decide gates\n",
                 host.c_str());
  }
  std::printf("console listening on http://%s:%d/\n", host.c_str(), server.port());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  server.Stop();
  // Leave without running static destructors (a Firestore store's client threads may still be
  // winding down); nothing is left to write.
  std::fflush(stdout);
  ::_exit(0);
}

}  // namespace agentckpt
