#include "examples/reference_agent/task_model.h"

#include <string>

#include "common/sha256.h"

namespace reference_agent {
namespace {

constexpr char kSystemPrompt[] =
    "You write technical blog posts about NATS JetStream. Gather findings, plan, draft, review.";
constexpr const char* kTopics[] = {"consumer lag", "redelivery", "ack wait", "dead letters",
                                   "max deliver",  "backoff",    "ordering", "idempotency"};

std::string Topic(int task, int step) { return kTopics[(task * 7 + step) % 8]; }

}  // namespace

const char* PhaseOfStep(int step) {
  if (step <= 6) return "gathering";
  if (step <= 12) return "planning";
  if (step <= 20) return "executing";
  return "reviewing";
}

TaskModel::TaskModel(int task, std::string started_at)
    : task_(task), started_at_(std::move(started_at)) {}

agentckpt::StatusOr<TaskModel> TaskModel::FromCheckpoint(const nlohmann::json& c) {
  try {
    const nlohmann::json& t = c.at("activeTask");
    const nlohmann::json& s = c.at("contextSummary");
    std::string id = t.at("taskId").get<std::string>();
    if (id.rfind("task-", 0) != 0) {
      return agentckpt::InvalidArgumentError("activeTask.taskId: not task-<n>: " + id);
    }
    TaskModel m(std::stoi(id.substr(5)), t.at("startedAt").get<std::string>());
    m.done_ = s.at("completedSteps").get<int>();
    m.gathered_ = s.at("gatheringResults").get<std::string>();
    m.draft_ = s.at("draftContent").get<std::string>();
    m.plan_ = s.at("planOutline");
    if (m.task_ < 1 || m.done_ < 0 || m.done_ > kStepsPerTask || !m.plan_.is_array()) {
      return agentckpt::InvalidArgumentError("checkpoint state out of range");
    }
    return m;
  } catch (const std::exception& e) {
    return agentckpt::InvalidArgumentError(std::string("checkpoint state: ") + e.what());
  }
}

const char* TaskModel::phase() const {
  return PhaseOfStep(done_ < kStepsPerTask ? done_ + 1 : kStepsPerTask);
}

std::string TaskModel::DoNextStep() {
  int step = done_ + 1;
  std::string phase = PhaseOfStep(step);
  std::string what;
  if (phase == "gathering") {
    gathered_ += "Finding " + std::to_string(step) + " on " + Topic(task_, step) +
                 ": measured p99 " + std::to_string(30 + (task_ * 13 + step * 7) % 90) +
                 " ms under load, 3 sources agree, one outlier discarded. ";
    what = "gathered finding " + std::to_string(step);
  } else if (phase == "planning") {
    plan_.push_back("Section " + std::to_string(step - 6) + ": " + Topic(task_, step) +
                    " (evidence: findings " + std::to_string(step - 6) + ")");
    what = "planned section " + std::to_string(step - 6);
  } else if (phase == "executing") {
    draft_ += "\n\n## Part " + std::to_string(step - 12) + ": " + Topic(task_, step) + "\n";
    for (int i = 0; i < 4; ++i) {
      draft_ += "When a consumer falls behind, " + Topic(task_, step + i) +
                " decides how long messages wait and how often they come back. ";
    }
    what = "drafted part " + std::to_string(step - 12);
  } else {
    draft_ += "\n[review " + std::to_string(step - 20) + ": tightened wording, checked numbers]";
    what = "reviewed pass " + std::to_string(step - 20);
  }
  done_ = step;
  return what;
}

nlohmann::json TaskModel::ContextPatch() const {
  return {{"activeTask",
           {{"taskId", "task-" + std::to_string(task_)},
            {"title", "Blog post " + std::to_string(task_) + ": JetStream consumer tuning"},
            {"phase", phase()},
            {"progress", done_ * 100 / kStepsPerTask},
            {"startedAt", started_at_}}},
          {"contextSummary",
           {{"systemPromptHash", agentckpt::Sha256Hex(kSystemPrompt)},
            {"gatheringResults", gathered_},
            {"planOutline", plan_},
            {"completedSteps", done_},
            {"draftContent", draft_}}}};
}

}  // namespace reference_agent
