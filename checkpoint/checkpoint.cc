#include "checkpoint/checkpoint.h"

namespace agentckpt {

std::string_view TaskPhaseName(TaskPhase phase) {
  switch (phase) {
    case TaskPhase::kGathering: return "gathering";
    case TaskPhase::kPlanning: return "planning";
    case TaskPhase::kExecuting: return "executing";
    case TaskPhase::kReviewing: return "reviewing";
  }
  return "gathering";
}

std::optional<TaskPhase> ParseTaskPhase(std::string_view name) {
  if (name == "gathering") return TaskPhase::kGathering;
  if (name == "planning") return TaskPhase::kPlanning;
  if (name == "executing") return TaskPhase::kExecuting;
  if (name == "reviewing") return TaskPhase::kReviewing;
  return std::nullopt;
}

std::string_view TriggerReasonName(TriggerReason reason) {
  switch (reason) {
    case TriggerReason::kPeriodic: return "periodic";
    case TriggerReason::kPreCompaction: return "pre_compaction";
    case TriggerReason::kTaskPhaseChange: return "task_phase_change";
    case TriggerReason::kManual: return "manual";
    case TriggerReason::kPreShutdown: return "pre_shutdown";
  }
  return "periodic";
}

std::optional<TriggerReason> ParseTriggerReason(std::string_view name) {
  if (name == "periodic") return TriggerReason::kPeriodic;
  if (name == "pre_compaction") return TriggerReason::kPreCompaction;
  if (name == "task_phase_change") return TriggerReason::kTaskPhaseChange;
  if (name == "manual") return TriggerReason::kManual;
  if (name == "pre_shutdown") return TriggerReason::kPreShutdown;
  return std::nullopt;
}

// The tool-call ledger's names (schema version 2).
std::string_view ToolEffectName(ToolEffect effect) {
  switch (effect) {
    case ToolEffect::kPure:
      return "pure";
    case ToolEffect::kRead:
      return "read";
    case ToolEffect::kIdempotent:
      return "idempotent";
    case ToolEffect::kWrite:
      return "write";
  }
  return "write";
}

std::optional<ToolEffect> ParseToolEffect(std::string_view name) {
  for (ToolEffect e :
       {ToolEffect::kPure, ToolEffect::kRead, ToolEffect::kIdempotent, ToolEffect::kWrite}) {
    if (ToolEffectName(e) == name) return e;
  }
  return std::nullopt;
}

std::string_view LedgerCallStateName(LedgerCallState state) {
  switch (state) {
    case LedgerCallState::kStarted:
      return "started";
    case LedgerCallState::kOutcomeUnknown:
      return "outcome_unknown";
    case LedgerCallState::kCompleted:
      return "completed";
  }
  return "started";
}

std::optional<LedgerCallState> ParseLedgerCallState(std::string_view name) {
  for (LedgerCallState s :
       {LedgerCallState::kStarted, LedgerCallState::kOutcomeUnknown, LedgerCallState::kCompleted}) {
    if (LedgerCallStateName(s) == name) return s;
  }
  return std::nullopt;
}

}  // namespace agentckpt
