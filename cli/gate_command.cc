#include "cli/gate_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/gate_resolve.h"
#include "cli/gate_store.h"
#include "cli/terminal_output.h"
#include "common/env.h"
#include "common/time_format.h"
#include "sidecar/config.h"

namespace agentckpt {
namespace {

using nlohmann::json;

void PrintJson(const json& j) { std::printf("%s\n", j.dump(2).c_str()); }

std::string Cell(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "-";
}

void PrintGateTable(const Gate& g) {
  json j = GateToJson(g);
  Table t({"gate", g.gate_id});
  t.AddRow({"state", Cell(j, "state") + (g.consumed ? " (consumed)" : "")});
  t.AddRow({"reason", g.reason});
  t.AddRow({"tool call", Cell(j, "toolCallId")});
  t.AddRow({"args sha256", Cell(j, "argsSha256")});
  t.AddRow({"created", Cell(j, "createdAt")});
  t.AddRow({"expires", Cell(j, "expiresAt")});
  if (g.decision) {
    t.AddRow({"decided by", g.decision->expired ? "expiry" : g.decision->by});
    t.AddRow({"decided", FormatRfc3339Millis(g.decision->resolved_at_ms)});
    if (!g.decision->response.is_null()) t.AddRow({"response", g.decision->response.dump()});
  }
  if (!g.request.is_null()) t.AddRow({"request", g.request.dump()});
  t.Print(stdout);
}

}  // namespace

GateCommand::GateCommand(CLI::App* app) {
  const char* agent = std::getenv("AGENT_ID");
  if (agent != nullptr) agent_ = agent;
  gate_ = app->add_subcommand("gate", "An agent's approval gates: list, show, approve, reject");
  gate_->require_subcommand(1);
  auto common = [this](CLI::App* sub) {
    sub->add_option("--agent", agent_, "Agent id (default: $AGENT_ID)");
    AddStoreFlags(sub, &store_);
    sub->add_flag("--json", json_, "Machine-readable JSON on stdout");
  };
  list_ = gate_->add_subcommand("list", "The agent's gates, oldest first (from the store)");
  common(list_);
  list_->add_option("--state", state_, "Only gates in this state")
      ->check(CLI::IsMember({"pending", "approved", "rejected"}));
  show_ = gate_->add_subcommand("show", "One gate (from the store)");
  common(show_);
  show_->add_option("gate", gate_id_, "Gate id")->required();
  for (bool approve : {true, false}) {
    CLI::App* sub = gate_->add_subcommand(
        approve ? "approve" : "reject",
        approve ? "Approve a gate (over NATS; in the store when no sidecar answers)"
                : "Reject a gate (over NATS; in the store when no sidecar answers)");
    common(sub);
    AddNatsClientFlags(sub, &nats_);
    sub->add_option("--timeout-ms", nats_.timeout_ms, "NATS connect and reply timeout")
        ->check(CLI::Range(100, 600000))
        ->capture_default_str();
    sub->add_option("gate", gate_id_, "Gate id")->required();
    sub->add_option("--by", by_, "Who decides (recorded in the decision)")->required();
    sub->add_option("--response", response_, "JSON for the agent (at most 16 KB)");
    sub->add_option("--args-sha256", args_sha256_,
                    "The argsSha256 of the request being decided (required to approve a gate "
                    "that has one)");
    (approve ? approve_ : reject_) = sub;
  }
}

bool GateCommand::Selected() const { return gate_->parsed(); }

int GateCommand::Execute() {
  if (agent_.empty()) {
    return ReportError("gate", InvalidArgumentError("--agent (or $AGENT_ID) is required"));
  }
  if (Status bad = CheckAgentIdSetting(agent_); !bad.ok()) return ReportSettingError("gate", bad);
  if (list_->parsed()) return List();
  if (show_->parsed()) return Show();
  return Resolve(approve_->parsed());
}

int GateCommand::List() {
  auto store = OpenStoreFromFlags(store_, agent_);
  if (!store.ok()) return ReportError("gate list", store.status());
  auto gates = LoadGatesFromStore(store->get(), agent_);
  if (!gates.ok()) return ReportError("gate list", gates.status());
  json out = json::array();
  Table table({"GATE", "STATE", "REASON", "EXPIRES", "DECIDED BY"});
  for (const Gate& g : *gates) {
    if (!state_.empty() && GateStateName(g.state) != state_) continue;
    out.push_back(GateToJson(g));
    table.AddRow({g.gate_id,
                  std::string(GateStateName(g.state)) + (g.consumed ? " (consumed)" : ""),
                  g.reason.substr(0, 40), FormatRfc3339Millis(g.expires_at_ms),
                  g.decision ? (g.decision->expired ? "expiry" : g.decision->by) : "-"});
  }
  if (json_) {
    PrintJson({{"gates", out}});
  } else if (out.empty()) {
    std::printf("no gates for %s\n", agent_.c_str());
  } else {
    table.Print(stdout);
  }
  return 0;
}

int GateCommand::Show() {
  auto store = OpenStoreFromFlags(store_, agent_);
  if (!store.ok()) return ReportError("gate show", store.status());
  auto gates = LoadGatesFromStore(store->get(), agent_);
  if (!gates.ok()) return ReportError("gate show", gates.status());
  for (const Gate& g : *gates) {
    if (g.gate_id != gate_id_) continue;
    if (json_) {
      PrintJson(GateToJson(g));
    } else {
      PrintGateTable(g);
    }
    return 0;
  }
  return ReportError("gate show", NotFoundError("no gate " + gate_id_ + " for " + agent_));
}

int GateCommand::Resolve(bool approve) {
  const std::string name = approve ? "gate approve" : "gate reject";
  json body = {{"gateId", gate_id_}, {"decision", approve ? "approved" : "rejected"}, {"by", by_}};
  if (!args_sha256_.empty()) body["argsSha256"] = args_sha256_;
  if (!response_.empty()) {
    json response = json::parse(response_, nullptr, /*allow_exceptions=*/false);
    if (response.is_discarded()) {
      return ReportError(name, InvalidArgumentError("--response: not JSON"));
    }
    body["response"] = response;
  }
  std::unique_ptr<CheckpointStore> opened;
  auto decided = DecideGate(nats_, agent_, body, [&]() -> StatusOr<CheckpointStore*> {
    auto store = OpenStoreFromFlags(store_, agent_);
    if (!store.ok()) return store.status();
    opened = std::move(store).value();
    return opened.get();
  });
  if (!decided.ok()) return ReportError(name, decided.status());
  const json& result = decided->result;
  const std::string& via = decided->via;
  if (json_) {
    json out = result;
    out["via"] = via;
    PrintJson(out);
  } else if (!result.contains("error")) {
    auto g = GateFromJson(result);
    if (g.ok()) PrintGateTable(*g);
  }
  if (result.contains("error")) {
    std::fprintf(stderr, "agentckpt %s: %s: %s\n", name.c_str(),
                 Cell(result["error"], "code").c_str(), Cell(result["error"], "message").c_str());
    return 1;
  }
  return 0;
}

}  // namespace agentckpt
