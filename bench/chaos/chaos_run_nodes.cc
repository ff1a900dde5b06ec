// ChaosRun with the JetStream store: the nats-server node kills of each cycle, their logs and
// their summary (node_chaos.h does the killing).
#include <algorithm>
#include <fstream>

#include "bench/chaos/chaos_run.h"
#include "bench/chaos/chaos_run_internal.h"
#include "bench/chaos/chaos_summary.h"

namespace chaos {

using agentckpt::Status;
using nlohmann::json;

void ChaosRun::PlanNodeKill(int n, CycleRow* row) {
  node_phase_.clear();
  // Every draw is made whatever the outcome, so that a seed gives the same plan.
  const bool kill = node_rng_() % 2 == 0;
  const int victim = static_cast<int>(node_rng_() % 3);
  const int fallback = static_cast<int>(node_rng_() % 3);
  const bool at_restore = node_rng_() % 2 == 0;
  const double work_delay =
      static_cast<double>(node_rng_() % static_cast<uint64_t>(o_.max_run_ms + 1));
  // From the restart: a restore takes 100-400 ms with every server up, so most of these kills
  // land in it (the others in what follows, up to the cycle's end).
  const double restore_delay = static_cast<double>(node_rng_() % 401);
  const int down_ms =
      o_.node_down_min_ms +
      static_cast<int>(node_rng_() %
                       static_cast<uint64_t>(o_.node_down_max_ms - o_.node_down_min_ms + 1));
  if (!kill) return;
  // At most one server down: the previous kill's server is back and every stream and the
  // inbox consumer have their three replicas again (a previous health wait that failed stops
  // the node kills altogether, rather than risk the quorum).
  Status quiet = nodes_->WaitQuiet(kQuietWaitMs);
  std::vector<NodeKill> kills = nodes_->kills();
  if (!quiet.ok() || (!kills.empty() && !kills.back().healthy)) {
    AddNote(row, "node kill skipped: " + (quiet.ok()
                                              ? "the cluster did not heal after " +
                                                    kills.back().Name() + ": " + kills.back().error
                                              : quiet.ToString()));
    return;
  }
  ++node_kills_planned_;
  node_victim_ = node_kills_planned_ % 3 == 0 ? -1 : victim;  // every third: the leader
  node_fallback_ = fallback;
  node_down_ms_ = down_ms;
  if (at_restore) {
    node_phase_ = "restore";
    node_delay_ms_ = restore_delay;  // planned at the restart (ChaosRun::Cycle)
  } else {
    node_phase_ = "work";
    nodes_->PlanKill(n, "work", work_delay, node_victim_, node_fallback_, node_down_ms_);
  }
}

void ChaosRun::EndNodeKills(int n, CycleRow* row) {
  nodes_->FireKillNow();           // a kill planned beyond the cycle happens at its end
  nodes_->RestartKilledBefore(n);  // a server killed in the cycle before is back by now
  row->nodes_down = nodes_->DownDuring(restart_t0_, restore_end_t_);
  const std::vector<NodeKill> kills = nodes_->kills();
  for (size_t i = 0; i < kills.size(); ++i) {
    const NodeKill& k = kills[i];
    if (k.cycle == n) {
      row->node_kill = k.Name();
      row->node_kill_leader = k.was_leader;
      row->node_kill_phase = k.phase;
    }
    // Each restart is reported once, by the first cycle that ends after it.
    if (k.restart_t > 0 && i >= node_restarts_reported_) {
      row->node_restart = k.Name();
      node_restarts_reported_ = i + 1;
    }
  }
}

void ChaosRun::KeepNatsLogs(int n) {
  constexpr std::streamoff kTail = 256 * 1024;
  for (int i = 0; i < nodes_->size(); ++i) {
    std::ifstream in(nodes_->log_path(i), std::ios::binary | std::ios::ate);
    const std::streamoff size = in.tellg();
    in.seekg(std::max<std::streamoff>(0, size - kTail));
    std::ofstream out(work_ + "/logs/nats-n" + std::to_string(i + 1) + "-cycle-" +
                      std::to_string(n) + ".log");
    out << in.rdbuf();
  }
}

json ChaosRun::NodeKillSummary() const {
  int targeted = 0, hit = 0, unknown = 0, still_down = 0, unhealthy = 0;
  std::map<std::string, int> by_node, by_phase;
  std::vector<double> down_ms, heal_ms;
  json errors = json::array();
  std::ofstream log(work_ + "/node-kills.jsonl", std::ios::trunc);
  for (const NodeKill& k : nodes_->kills()) {
    log << json{{"cycle", k.cycle},          {"phase", k.phase},
                {"node", k.Name()},          {"targetedLeader", k.targeted_leader},
                {"wasLeader", k.was_leader}, {"leaderKnown", k.leader_known},
                {"killT", k.kill_t},         {"restartT", k.restart_t},
                {"healthyT", k.healthy_t},   {"healthy", k.healthy},
                {"error", k.error}}
               .dump()
        << "\n";
    targeted += k.targeted_leader ? 1 : 0;
    hit += k.was_leader ? 1 : 0;
    unknown += k.leader_known ? 0 : 1;
    ++by_node[k.Name()];
    ++by_phase[k.phase];
    if (k.restart_t > 0) {
      down_ms.push_back(k.restart_t - k.kill_t);
    } else {
      ++still_down;
    }
    if (k.healthy_t > 0 && k.healthy) heal_ms.push_back(k.healthy_t - k.restart_t);
    if (k.healthy_t > 0 && !k.healthy) ++unhealthy;
    if (!k.error.empty())
      errors.push_back("cycle " + std::to_string(k.cycle) + " " + k.Name() + ": " + k.error);
  }
  return {{"total", nodes_->kills().size()},
          {"targetedLeader", targeted},
          {"leaderOfAgentRecords", hit},
          {"leaderUnknown", unknown},
          {"byNode", by_node},
          {"byPhase", by_phase},
          {"downMs", Distribution(down_ms)},
          {"healthyAfterRestartMs", Distribution(heal_ms)},
          {"healthWaitsFailed", unhealthy},
          {"stillDown", still_down},
          {"errors", errors}};
}

}  // namespace chaos
