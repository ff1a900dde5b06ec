#include "bench/chaos/chaos_types.h"

#include <sstream>

namespace chaos {

nlohmann::json CycleRow::ToJson() const {
  return {{"cycle", cycle},
          {"signal", signal},
          {"target", target},
          {"runMs", run_ms},
          {"fed", fed},
          {"newestConfirmedSeq", newest_confirmed_seq},
          {"restoredSeq", restored_seq},
          {"restoredId", restored_id},
          {"restoreSource", restore_source},
          {"confirmedLost", confirmed_lost},
          {"recoveryMs", recovery_ms},
          {"restoreTotalMs", restore_total_ms},
          {"restorePhasesMs", restore_phases_ms},
          {"agentResumeMs", agent_resume_ms},
          {"stepsLost", steps_lost},
          {"workLostMs", work_lost_ms},
          {"ackedUpdates", acked_updates},
          {"ackedLost", acked_lost},
          {"restoredJournalSeq", restored_journal_seq},
          {"msgsAfterCheckpoint", msgs_after_checkpoint},
          {"replayHandled", replay_handled},
          {"replayPending", replay_pending},
          {"duplicates", duplicates},
          {"injectedCrash", injected_crash},
          {"replaySideEffects", replay_side_effects},
          {"appMsgsInRestoreWindow", app_msgs_in_window},
          {"consumerUnchanged", consumer_unchanged},
          {"consumerShift", consumer_shift},
          {"preShutdown", pre_shutdown},
          {"sidecarExit", sidecar_exit},
          {"resumedFromRestore", resumed_from_restore},
          {"nodesDown", nodes_down},
          {"nodeKill", node_kill},
          {"nodeKillLeader", node_kill_leader},
          {"nodeKillPhase", node_kill_phase},
          {"nodeRestart", node_restart},
          {"listedUnreadable", listed_unreadable},
          {"ok", ok},
          {"note", note}};
}

std::string CycleRow::CsvHeader() {
  return "cycle,signal,target,run_ms,fed,newest_confirmed_seq,restored_seq,restore_source,"
         "confirmed_lost,recovery_ms,restore_total_ms,agent_resume_ms,steps_lost,work_lost_ms,"
         "msgs_after_checkpoint,replay_handled,replay_pending,duplicates,replay_side_effects,"
         "app_msgs_in_window,consumer_unchanged,pre_shutdown,sidecar_exit,resumed_from_restore,"
         "acked_updates,acked_lost,restored_journal_seq,ok,note,injected_crash,"
         "nodes_down,node_kill,node_kill_leader,node_kill_phase,node_restart,listed_unreadable";
}

std::string CycleRow::ToCsv() const {
  std::ostringstream o;
  std::string clean_note = note;
  for (char& c : clean_note) {
    if (c == ',' || c == '\n' || c == '"') c = ';';
  }
  o << cycle << ',' << signal << ',' << target << ',' << run_ms << ',' << fed << ','
    << newest_confirmed_seq << ',' << restored_seq << ',' << restore_source << ',' << confirmed_lost
    << ',' << recovery_ms << ',' << restore_total_ms << ',' << agent_resume_ms << ',' << steps_lost
    << ',' << work_lost_ms << ',' << msgs_after_checkpoint << ',' << replay_handled << ','
    << replay_pending << ',' << duplicates << ',' << replay_side_effects << ','
    << app_msgs_in_window << ',' << consumer_unchanged << ',' << pre_shutdown << ',' << sidecar_exit
    << ',' << (resumed_from_restore ? 1 : 0) << ',' << acked_updates << ',' << acked_lost << ','
    << restored_journal_seq << ',' << (ok ? 1 : 0) << ',' << clean_note << ',' << injected_crash
    << ',' << nodes_down << ',' << node_kill << ',' << (node_kill_leader ? 1 : 0) << ','
    << node_kill_phase << ',' << node_restart << ',' << listed_unreadable;
  return o.str();
}

}  // namespace chaos
