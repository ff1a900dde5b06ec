#include "console/diff_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/terminal_output.h"
#include "console/console_views.h"
#include "sidecar/config.h"

namespace agentckpt {
namespace {

using nlohmann::json;

std::string Text(const json& v) {
  if (v.is_null()) return "-";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

void PrintChange(Table* t, const std::string& name, const json& change) {
  t->AddRow({name, Text(change["from"]) + (change["changed"].get<bool>()
                                               ? " -> " + Text(change["to"])
                                               : " (unchanged)")});
}

void PrintHuman(const json& d) {
  std::printf("diff of %s: sequence %s -> %s\n\n", Text(d["agentId"]).c_str(),
              Text(d["from"]["sequenceNumber"]).c_str(), Text(d["to"]["sequenceNumber"]).c_str());
  Table t({"task", Text(d["task"]["taskId"]["to"])});
  PrintChange(&t, "phase", d["task"]["phase"]);
  PrintChange(&t, "progress", d["task"]["progress"]);
  PrintChange(&t, "steps", d["completedSteps"]);
  PrintChange(&t, "acked", d["lastAckedSequence"]);
  t.Print(stdout);
  for (const json& p : d["plan"]["added"]) std::printf("plan + %s\n", Text(p).c_str());
  for (const json& p : d["plan"]["removed"]) std::printf("plan - %s\n", Text(p).c_str());
  for (const json& c : d["toolCalls"]["added"]) {
    std::printf("tool call + %s: %s\n", Text(c["toolName"]).c_str(),
                Text(c.value("inputSummary", json())).c_str());
  }
  for (const json& c : d["ledger"]["added"]) {
    std::printf("ledger + %s %s (%s)\n", Text(c["callId"]).c_str(), Text(c["toolName"]).c_str(),
                Text(c["state"]).c_str());
  }
  if (d["draft"]["changed"].get<bool>()) {
    std::printf("\n----- draft -----\n");
    for (const json& l : d["draft"]["lines"]) {
      std::printf("%s %s\n", Text(l["op"]).c_str(), Text(l["text"]).c_str());
    }
  }
}

}  // namespace

DiffCommand::DiffCommand(CLI::App* app) {
  const char* agent = std::getenv("AGENT_ID");
  if (agent != nullptr) agent_ = agent;
  command_ = app->add_subcommand("diff", "The difference between two checkpoints of an agent");
  command_->add_option("from", from_, "The older checkpoint: latest, a sequence number or an id")
      ->required();
  command_->add_option("to", to_, "The newer checkpoint: latest, a sequence number or an id")
      ->required();
  command_->add_option("--agent", agent_, "Agent id (default: $AGENT_ID)");
  AddStoreFlags(command_, &store_);
  command_->add_flag("--json", json_, "Machine-readable JSON on stdout");
}

bool DiffCommand::Selected() const { return command_->parsed(); }

int DiffCommand::Execute() {
  if (agent_.empty()) {
    return ReportError("diff", InvalidArgumentError("--agent (or $AGENT_ID) is required"));
  }
  if (Status bad = CheckAgentIdSetting(agent_); !bad.ok()) return ReportSettingError("diff", bad);
  auto store = OpenStoreFromFlags(store_, agent_);
  if (!store.ok()) return ReportError("diff", store.status());
  auto diff = DiffView(store->get(), agent_, from_, to_);
  if (!diff.ok()) return ReportError("diff", diff.status());
  if (json_) {
    std::printf("%s\n", diff->dump(2).c_str());
  } else {
    PrintHuman(*diff);
  }
  return 0;
}

}  // namespace agentckpt
