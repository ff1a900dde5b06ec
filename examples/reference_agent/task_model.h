// TaskModel: the reference agent's multi-phase task. Task n ("task-<n>") has kStepsPerTask steps:
// 1-6 gathering, 7-12 planning, 13-20 executing, 21-24 reviewing. Each finished step changes
// the working context (gathered findings, plan, draft), which is what the sidecar checkpoints.
// The whole state is in the context, so a checkpoint is all the agent needs to continue.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace reference_agent {

inline constexpr int kStepsPerTask = 24;

// The phase in which step `step` (1-based) is worked on.
const char* PhaseOfStep(int step);

class TaskModel {
 public:
  // Task `task` (>= 1), no step done yet, started at `started_at` (RFC 3339).
  TaskModel(int task, std::string started_at);

  // The state saved in a checkpoint document (GET /v1/checkpoints/{id}). kInvalidArgument if
  // it has no active task of this agent's form or its fields are missing.
  static agentckpt::StatusOr<TaskModel> FromCheckpoint(const nlohmann::json& checkpoint);

  int task() const { return task_; }
  int done() const { return done_; }
  bool finished() const { return done_ >= kStepsPerTask; }
  // Global step index across tasks, for counting work: (task - 1) * kStepsPerTask + done.
  int64_t global_step() const { return static_cast<int64_t>(task_ - 1) * kStepsPerTask + done_; }
  // The phase of the next step (of the last one when finished).
  const char* phase() const;

  // Does step done()+1: updates findings, plan or draft. Returns a one-line description.
  std::string DoNextStep();

  // {"activeTask", "contextSummary"} for PATCH /v1/context (without toolCallLog).
  nlohmann::json ContextPatch() const;

 private:
  int task_;
  int done_ = 0;
  std::string started_at_;
  std::string gathered_;
  std::string draft_;
  nlohmann::json plan_ = nlohmann::json::array();
};

}  // namespace reference_agent
