// chaos_harness: the crash-recovery proof (bench/chaos/chaos_run.h) and its report.
//
//   chaos_harness run --cycles N --mode sigkill|sigterm|mixed --store sqlite|firestore|jetstream
//                     [--faults] [--seed S] --out DIR [--bin-dir DIR] [--no-timing-targets]
//                     [--no-node-kills] [--node-down-min-ms 300] [--node-down-max-ms 5000] ...
//   chaos_harness report --run DIR [--run DIR ...] --out docs/recovery-report.md
//                        --plot-data FILE --plot-script FILE --plot-svg docs/x.svg
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <random>
#include <string>

#include "bench/chaos/chaos_report.h"
#include "bench/chaos/chaos_run.h"
#include "bench/chaos/chaos_summary.h"

namespace {

std::string SelfDir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.rfind('/'));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"agentckpt crash-recovery proof"};
  app.require_subcommand(1);
  chaos::ChaosOptions o;
  o.bin_dir = SelfDir();
  bool no_timing = false;
  CLI::App* run = app.add_subcommand("run", "kill-and-restart cycles");
  run->add_option("--cycles", o.cycles)->check(CLI::Range(1, 1000000));
  run->add_option("--mode", o.mode)->check(CLI::IsMember({"sigkill", "sigterm", "mixed"}));
  run->add_option("--store", o.store)->check(CLI::IsMember({"sqlite", "firestore", "jetstream"}));
  run->add_flag("--faults", o.faults, "Firestore emulator fault injection");
  run->add_option("--fault-error-rate", o.fault_error_rate)->check(CLI::Range(0.0, 1.0));
  run->add_option("--fault-delay-rate", o.fault_delay_rate)->check(CLI::Range(0.0, 1.0));
  run->add_option("--fault-delay-ms", o.fault_delay_ms)->check(CLI::Range(0, 60000));
  run->add_option("--fault-drop-rate", o.fault_drop_rate)->check(CLI::Range(0.0, 1.0));
  run->add_option("--seed", o.seed, "0: pick one (printed)");
  run->add_option("--out", o.out_dir, "output directory")->required();
  run->add_option("--bin-dir", o.bin_dir, "directory of agentckpt, reference_agent, emulator");
  run->add_option("--nats-server", o.nats_server);
  run->add_option("--agent", o.agent_id);
  run->add_option("--min-run-ms", o.min_run_ms)->check(CLI::Range(0, 600000));
  run->add_option("--max-run-ms", o.max_run_ms)->check(CLI::Range(0, 600000));
  run->add_option("--step-ms", o.step_ms)->check(CLI::Range(0, 60000));
  run->add_option("--period-s", o.period_s, "CKPT_PERIOD_S")->check(CLI::Range(1, 86400));
  run->add_option("--durability", o.durability, "CKPT_DURABILITY")
      ->check(CLI::IsMember({"sync", "async", "memory"}));
  run->add_option("--precompaction-every", o.precompaction_every,
                  "the agent asks for a pre_compaction checkpoint every N steps (0: never)")
      ->check(CLI::Range(0, 1000000));
  run->add_option("--lease-ttl-s", o.lease_ttl_s, "CKPT_LEASE_TTL_S (0: default)")
      ->check(CLI::Range(0, 3600));
  run->add_flag("--no-timing-targets", no_timing, "exit code from correctness targets only");
  bool no_node_kills = false;
  run->add_flag("--no-node-kills", no_node_kills,
                "jetstream: keep every nats-server of the cluster up (no node kills)");
  run->add_option("--node-down-min-ms", o.node_down_min_ms,
                  "jetstream: shortest time a killed nats-server stays down")
      ->check(CLI::Range(0, 600000));
  run->add_option("--node-down-max-ms", o.node_down_max_ms,
                  "jetstream: longest time a killed nats-server stays down (it is restarted at "
                  "the end of the next cycle at the latest)")
      ->check(CLI::Range(0, 600000));
  bool no_injected = false;
  run->add_flag("--no-injected-crashes", no_injected,
                "only kills at random moments, no crashes at the agent's write-call points");

  std::string partial_dir;
  CLI::App* summarize = app.add_subcommand(
      "summarize", "summary.json of a run that was stopped early, from its cycles.jsonl");
  summarize->add_option("--run", partial_dir)->required();
  summarize->add_option("--mode", o.mode);
  summarize->add_option("--store", o.store);
  summarize->add_option("--seed", o.seed);

  chaos::ReportOptions r;
  CLI::App* report = app.add_subcommand("report", "write docs/recovery-report.md from runs");
  report->add_option("--run", r.runs, "a run's output directory (repeatable)")->required();
  report->add_option("--out", r.out_path)->required();
  report->add_option("--plot-data", r.plot_data_path)->required();
  report->add_option("--plot-script", r.plot_script_path, "gnuplot script to write")->required();
  report->add_option("--plot-svg", r.plot_svg_path, "SVG the script draws (beside the report)");
  report->add_option("--machine", r.machine, "machine description lines (repeatable)");
  report->add_option("--note", r.notes, "a caveat about these runs (repeatable)");
  CLI11_PARSE(app, argc, argv);

  if (report->parsed()) return chaos::WriteReport(r);
  if (summarize->parsed()) return chaos::SummarizePartialRun(partial_dir, o);
  if (o.node_down_min_ms > o.node_down_max_ms) {
    std::fprintf(stderr, "chaos_harness: --node-down-min-ms is above --node-down-max-ms\n");
    return 2;
  }
  if (o.min_run_ms > o.max_run_ms) {
    std::fprintf(stderr, "chaos_harness: --min-run-ms is above --max-run-ms\n");
    return 2;
  }
  if (o.seed == 0) o.seed = std::random_device{}() | 1;
  o.timing_targets = !no_timing;
  o.injected_crashes = !no_injected;
  o.node_kills = !no_node_kills;
  chaos::ChaosRun chaos_run(o);
  return chaos_run.Run();
}
