// Restoration prompt build time: BuildRestorationPrompt on the max fixture (checkpoint-max.json)
// with 50 replayed messages of 2 KB (30 handled, 20 pending), 4,000-token budget, exact token
// counting under each encoding. One process, one thread, in memory (no store, no NATS): the
// figure is the prompt builder's own cost within a restore. The first build of each encoding is
// reported apart (it loads the rank tables). Then the same with the context and the bodies
// written in hostile scripts (CJK, rare CJK, emoji, ...). Prints p50/p90/p99 of the wall time
// and of the thread's CPU time, with the machine's load average (wall-time tails on a shared,
// busy machine are mostly time spent preempted).
//
//   build/bin/prompt_bench [--runs N] [--no-hostile] [--script NAME]
//   (--no-hostile: the max fixture only; --script: that hostile script only, e.g. cjk)
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/common/percentiles.h"
#include "restore/prompt_builder.h"
#include "tests/restore/hostile_texts.h"
#include "tests/restore/prompt_test_util.h"
#include "tests/support/fixtures.h"

namespace agentckpt::bench {
namespace {

double ThreadCpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Wall time, and the thread's CPU time (which leaves out time spent preempted on a busy machine).
void Measure(const std::string& name, const PromptInput& in, TokenEncoding enc, int runs) {
  PromptOptions opts;
  opts.tokenizer = enc;
  Latencies wall, cpu;
  size_t tokens = 0;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    double cpu_start = ThreadCpuMicros();
    RestorationPrompt p = BuildRestorationPrompt(in, opts);
    cpu.Add(ThreadCpuMicros() - cpu_start);
    wall.Add(MicrosSince(start));
    tokens = p.tokens;
  }
  std::string label =
      name + " " + std::string(TokenEncodingName(enc)) + " (" + std::to_string(tokens) + " tok)";
  wall.Print(label + " wall");
  cpu.Print(label + " cpu");
}

int Run(int runs, bool hostile_scripts, const std::string& only) {
  const Checkpoint fixture = testing::LoadFixtureCheckpoint("checkpoint-max.json");
  ReplayResult replay = testing::MakeReplay(50, 30, 2048);
  PromptInput in;
  in.agent_id = fixture.agent_id;
  in.checkpoint = &fixture;
  in.checkpoint_age_ms = 125'000;
  in.replay_configured = true;
  in.replay = &replay;
  for (TokenEncoding enc : {TokenEncoding::kO200kBase, TokenEncoding::kCl100kBase}) {
    PromptOptions opts;
    opts.tokenizer = enc;
    auto start = std::chrono::steady_clock::now();
    BuildRestorationPrompt(in, opts);
    std::printf("first build %s (loads the tables): %.1f ms\n",
                std::string(TokenEncodingName(enc)).c_str(), MicrosSince(start) / 1000);
  }
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) == 3)
    std::printf("load average %.2f %.2f %.2f\n", load[0], load[1], load[2]);
  for (TokenEncoding enc : {TokenEncoding::kO200kBase, TokenEncoding::kCl100kBase}) {
    Measure("max fixture + 50 msgs", in, enc, runs);
  }
  for (const std::string& script : testing::HostileScripts()) {
    if (!hostile_scripts) break;
    if (!only.empty() && script != only) continue;
    Checkpoint cp = fixture;
    ReplayResult hostile;
    testing::MakeHostilePromptInputs(script, &cp, &hostile);
    PromptInput h = in;
    h.checkpoint = &cp;
    h.replay = &hostile;
    Measure("hostile " + script, h, TokenEncoding::kO200kBase, runs / 4 + 1);
  }
  return 0;
}

}  // namespace
}  // namespace agentckpt::bench

int main(int argc, char** argv) {
  int runs = 400;
  bool hostile_scripts = true;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--no-hostile") == 0) hostile_scripts = false;
    if (std::strcmp(argv[i], "--script") == 0 && i + 1 < argc) only = argv[++i];
  }
  return agentckpt::bench::Run(runs, hostile_scripts, only);
}
