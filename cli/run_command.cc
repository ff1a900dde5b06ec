#include "cli/run_command.h"

#include <nats/nats.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "cli/terminal_output.h"
#include "http/http_server.h"
#include "observability/json_log.h"
#include "sidecar/config.h"
#include "sidecar/sidecar.h"
#include "tracing/tracing_setup.h"

namespace agentckpt {
namespace {

// The longest the exporter may take at SIGTERM to send the spans still queued (an unreachable
// collector must not hold up the exit).
constexpr int64_t kTraceFlushMs = 1000;

// OpenTelemetry tracing from the OTEL_* variables (docs/tracing.md); null when off.
std::unique_ptr<tracing::Tracer> StartTracing() {
  auto report = [](const std::string& message, const nlohmann::json& fields) {
    LogWarn(message, fields);
  };
  std::unique_ptr<tracing::Tracer> tracer =
      tracing::TracerFromEnvironment(Env::Default(), ProcessEnvLookup(), report);
  if (tracer != nullptr) tracing::SetGlobalTracer(tracer.get());
  return tracer;
}

// Bounds the shutdown (CKPT_SHUTDOWN_BUDGET_S): if it is not done in time, log and leave with
// exit code 1. Shutdown() itself stops waiting for the store before this.
void StartShutdownWatchdog(int budget_s) {
  const int budget_ms = budget_s * 1000;
  std::thread([budget_ms] {
    std::this_thread::sleep_for(std::chrono::milliseconds(budget_ms - 200));
    LogError("shutdown exceeded its budget; exiting", {{"budgetMs", budget_ms}});
    std::fflush(stdout);
    ::_exit(1);
  }).detach();
}

int ExitCodeFor(const Status& s) { return s.code() == StatusCode::kInvalidArgument ? 2 : 1; }

}  // namespace

RunCommand::RunCommand(CLI::App* app) {
  sub_ = app->add_subcommand("run", "Run the checkpointing sidecar next to an agent");
  for (const SettingSpec& spec : SettingSpecs()) {
    std::string help = spec.help + " [env " + spec.env + "]";
    if (!spec.default_text.empty()) help += " (default " + spec.default_text + ")";
    std::string flag = spec.flag;
    sub_->add_option_function<std::string>(
        "--" + flag, [this, flag](const std::string& v) { values_[flag] = v; }, help);
  }
}

bool RunCommand::Selected() const { return sub_->parsed(); }

int RunCommand::Execute() { return RunSidecarMain(values_); }

sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return signals;
}

int RunSidecarMain(const std::map<std::string, std::string>& flags) {
  auto config = ResolveConfig(flags, ProcessEnvLookup());
  if (!config.ok()) return ReportSettingError("run", config.status());
  // Signals are taken by sigwait below; every thread started from here on inherits the mask.
  sigset_t signals = BlockStopSignals();

  InitJsonLog(config->log_level);
  ConfigureHttpThreads(4);
  nats_Open(-1);
  int code = 0;
  // Never destroyed: the process leaves with _exit, and spans may end until then.
  std::unique_ptr<tracing::Tracer> tracer = StartTracing();
  {
    auto sidecar = Sidecar::Create(*config, Env::Default());
    if (!sidecar.ok()) {
      std::fprintf(stderr, "agentckpt run: %s\n", sidecar.status().message().c_str());
      LogError("sidecar failed to start", {{"reason", sidecar.status().ToString()}});
      nats_CloseAndWait(1000);
      return ExitCodeFor(sidecar.status());
    }
    Status started = (*sidecar)->Start();
    if (!started.ok()) {
      std::fprintf(stderr, "agentckpt run: %s\n", started.message().c_str());
      LogError("sidecar failed to start", {{"reason", started.ToString()}});
      code = ExitCodeFor(started);
      (*sidecar)->Stop();
    } else {
      int sig = 0;
      sigwait(&signals, &sig);
      LogInfo("shutdown requested", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
      StartShutdownWatchdog(config->shutdown_budget_s);
      const auto shutdown_start = std::chrono::steady_clock::now();
      Status stopped = (*sidecar)->Shutdown();
      if (tracer != nullptr) {
        // The spans still queued get what is left of the budget (less the watchdog's margin),
        // at most kTraceFlushMs; an export in progress is cut off then.
        const int64_t spent_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::steady_clock::now() - shutdown_start)
                                     .count();
        const int64_t left_ms = int64_t{config->shutdown_budget_s} * 1000 - 400 - spent_ms;
        tracer->Shutdown(std::clamp<int64_t>(left_ms, 0, kTraceFlushMs));
      }
      // Everything durable is written and NATS is flushed and closed: leave now, without
      // tearing down the HTTP listener under clients that may still be connected.
      std::fflush(stdout);
      ::_exit(stopped.ok() ? 0 : 1);
    }
    nats_CloseAndWait(1000);
  }
  std::fflush(stdout);
  // Leave without running static destructors: cpprestsdk's thread pool may still be winding
  // down, and everything durable has been written.
  ::_exit(code);
}

}  // namespace agentckpt
