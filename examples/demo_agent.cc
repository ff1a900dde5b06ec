// demo_agent: a small agent that works through a four-phase task while the agentckpt sidecar
// checkpoints it, exactly as README describes the agent's side:
//   demo_agent setup   --nats URL --agent ID            create the inbox stream and consumer
//   demo_agent publish --nats URL --agent ID --count N  put N task messages in the inbox
//   demo_agent work    --nats URL --agent ID --sidecar URL [--steps N] [--step-ms MS]
//   demo_agent watch   --nats URL --agent ID [--seconds S] [--until SUFFIX]
//   demo_agent prompt  --sidecar URL                    print the restoration prompt
// The stream is AGENT_INBOX on "inbox.>", the durable consumer is named after the agent.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>

#include "examples/demo_agent_http.h"
#include "examples/demo_agent_nats.h"

namespace {

using nlohmann::json;

constexpr char kStream[] = "AGENT_INBOX";

std::string IsoNow() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  time_t secs = static_cast<time_t>(ms / 1000);
  tm t{};
  gmtime_r(&secs, &t);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", t.tm_year + 1900,
                t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                static_cast<long long>(ms % 1000));
  return buf;
}

const char* PhaseOf(int step, int steps) {
  int quarter = steps / 4 > 0 ? steps / 4 : 1;
  if (step < quarter) return "gathering";
  if (step < 2 * quarter) return "planning";
  if (step < 3 * quarter) return "executing";
  return "reviewing";
}

int Work(const std::map<std::string, std::string>& a) {
  const std::string agent = a.at("agent");
  const std::string sidecar = a.at("sidecar");
  int steps = a.count("steps") ? std::atoi(a.at("steps").c_str()) : 12;
  int step_ms = a.count("step-ms") ? std::atoi(a.at("step-ms").c_str()) : 400;
  demo::Nats nats(a.at("nats"));
  json plan = json::array();
  int sections = steps / 4 > 0 ? steps / 4 : 1;
  for (int i = 1; i <= sections; ++i) plan.push_back("Section " + std::to_string(i));
  std::string gathered, draft;
  std::string started = IsoNow();
  for (int step = 0; step < steps; ++step) {
    const char* phase = PhaseOf(step, steps);
    std::string did;
    // Handle the inbox: each message is a side effect done once, then acked.
    auto handled = nats.FetchAndAck(kStream, agent, 2, [&](const demo::InboxMessage& m) {
      std::printf("[agent] handled inbox message #%llu %s\n",
                  static_cast<unsigned long long>(m.stream_sequence), m.data.c_str());
    });
    if (std::strcmp(phase, "gathering") == 0) {
      gathered += "Data point " + std::to_string(step + 1) + ": latency p99 " +
                  std::to_string(40 + step) + " ms. ";
      did = "gathered data point " + std::to_string(step + 1);
    } else if (std::strcmp(phase, "executing") == 0 || std::strcmp(phase, "reviewing") == 0) {
      draft += "Paragraph " + std::to_string(step + 1) + " of the post. ";
      did = "drafted paragraph " + std::to_string(step + 1);
    } else {
      did = "refined the outline";
    }
    // A plan section is done when its paragraph is drafted (one per executing step).
    int quarter = steps / 4 > 0 ? steps / 4 : 1;
    int sections_done = std::strcmp(phase, "executing") == 0   ? step - 2 * quarter + 1
                        : std::strcmp(phase, "reviewing") == 0 ? quarter
                                                               : 0;
    if (sections_done > static_cast<int>(plan.size())) sections_done = static_cast<int>(plan.size());
    json tool = {{"toolName", step % 3 == 0 ? "web_search" : "write_file"},
                 {"timestamp", IsoNow()},
                 {"inputSummary", did},
                 {"outputSummary", "ok, " + std::to_string(handled.size()) + " inbox messages"},
                 {"durationMs", 20 + step},
                 {"success", step % 5 != 4}};
    demo::Call(sidecar, "POST", "/v1/tool-calls", tool);
    json context = {
        {"activeTask",
         {{"taskId", "task-4521"},
          {"title", "Blog post: NATS dead letter queues"},
          {"phase", phase},
          {"progress", (step + 1) * 100 / steps},
          {"startedAt", started}}},
        {"contextSummary",
         {{"systemPromptHash", std::string(64, 'a')},
          {"gatheringResults", gathered},
          {"planOutline", plan},
          {"completedSteps", sections_done},
          {"draftContent", draft}}}};
    auto r = demo::Call(sidecar, "PATCH", "/v1/context", context);
    std::printf("[agent] step %2d/%d %-9s %s (sidecar: %d)\n", step + 1, steps, phase, did.c_str(),
                r.status);
    if (step == steps / 2) {
      auto c = demo::Call(sidecar, "POST", "/v1/checkpoints", {{"trigger", "pre_compaction"}});
      std::printf("[agent] pre-compaction checkpoint: %d %s\n", c.status, c.body.dump().c_str());
    }
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(step_ms));
  }
  std::printf("[agent] task done\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: demo_agent setup|publish|work|watch|prompt --flag value ...\n");
    return 2;
  }
  std::string cmd = argv[1];
  std::map<std::string, std::string> a;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strncmp(argv[i], "--", 2) != 0) {
      std::fprintf(stderr, "demo_agent: expected --flag, got %s\n", argv[i]);
      return 2;
    }
    a[argv[i] + 2] = argv[i + 1];
  }
  auto need = [&](std::initializer_list<const char*> keys) {
    for (const char* k : keys) {
      if (!a.count(k)) {
        std::fprintf(stderr, "demo_agent %s: --%s is required\n", cmd.c_str(), k);
        std::exit(2);
      }
    }
  };
  if (cmd == "setup") {
    need({"nats", "agent"});
    demo::Nats(a["nats"]).SetupInbox(kStream, a["agent"]);
    std::printf("[setup] stream %s, durable consumer %s\n", kStream, a["agent"].c_str());
    return 0;
  }
  if (cmd == "publish") {
    need({"nats", "agent", "count"});
    demo::Nats(a["nats"]).Publish(a["agent"], std::atoi(a["count"].c_str()),
                                  a.count("prefix") ? a["prefix"] : "task");
    return 0;
  }
  if (cmd == "work") {
    need({"nats", "agent", "sidecar"});
    return Work(a);
  }
  if (cmd == "watch") {
    need({"nats", "agent"});
    int seconds = a.count("seconds") ? std::atoi(a["seconds"].c_str()) : 30;
    bool seen = demo::Nats(a["nats"]).Watch(a["agent"], seconds, a.count("until") ? a["until"] : "");
    return a.count("until") && !seen ? 1 : 0;
  }
  if (cmd == "prompt") {
    need({"sidecar"});
    auto r = demo::Call(a["sidecar"], "GET", "/v1/restoration");
    if (r.status != 200) {
      std::fprintf(stderr, "GET /v1/restoration: %d %s %s\n", r.status, r.error.c_str(),
                   r.body.dump().c_str());
      return 1;
    }
    std::printf("%s\n", r.body.value("prompt", std::string()).c_str());
    return 0;
  }
  std::fprintf(stderr, "demo_agent: unknown command %s\n", cmd.c_str());
  return 2;
}
