#include "cli/store_commands.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_json.h"
#include "cli/terminal_output.h"
#include "common/env.h"
#include "common/time_format.h"

namespace agentckpt {
namespace {

using nlohmann::json;

void PrintJson(const json& j) { std::printf("%s\n", j.dump(2).c_str()); }

std::string Str(std::string_view s) { return std::string(s); }

}  // namespace

StoreCommands::StoreCommands(CLI::App* app) {
  auto common = [this](CLI::App* sub) {
    sub->add_option("--agent", o_.agent, "Agent id")->required();
    AddStoreFlags(sub, &o_.store);
    sub->add_flag("--json", o_.json, "Machine-readable JSON on stdout");
  };
  list_ = app->add_subcommand("list", "List an agent's checkpoints, newest first");
  common(list_);
  list_->add_option("--limit", o_.limit, "How many to list")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  show_ = app->add_subcommand("show",
                              "Show one checkpoint, verified: an id, a sequence number "
                              "or 'latest' (the newest that verifies)");
  common(show_);
  show_->add_option("which", o_.which, "Checkpoint id, sequence number or 'latest'")->required();
  verify_ = app->add_subcommand("verify",
                                "Verify every checkpoint of an agent (exit 1 if any is corrupted)");
  common(verify_);
  prune_ = app->add_subcommand("prune", "Delete all but the newest N checkpoints of an agent");
  common(prune_);
  prune_->add_option("--keep", o_.keep, "How many to keep")
      ->required()
      ->check(CLI::Range(1, 1000000));
  status_ = app->add_subcommand("status", "Show the agent's status record");
  common(status_);
}

bool StoreCommands::Selected() const {
  return list_->parsed() || show_->parsed() || verify_->parsed() || prune_->parsed() ||
         status_->parsed();
}

std::string StoreCommands::Name() const {
  for (CLI::App* sub : {list_, show_, verify_, prune_, status_}) {
    if (sub->parsed()) return sub->get_name();
  }
  return "";
}

int StoreCommands::Execute() {
  auto store = OpenStoreFromFlags(o_.store, o_.agent);
  if (!store.ok()) return ReportError(Name(), store.status());
  CheckpointStore* s = store->get();
  if (list_->parsed()) return List(s);
  if (show_->parsed()) return Show(s);
  if (verify_->parsed()) return Verify(s);
  if (prune_->parsed()) return Prune(s);
  return Status(s);
}

int StoreCommands::List(CheckpointStore* store) {
  auto rows = store->List(o_.agent, o_.limit);
  if (!rows.ok()) return ReportError("list", rows.status());
  const int64_t now = Env::Default()->NowUnixMillis();
  if (o_.json) {
    json out = json::array();
    for (const auto& r : *rows) {
      out.push_back({{"checkpointId", r.checkpoint_id},
                     {"sequenceNumber", r.sequence_number},
                     {"timestamp", FormatRfc3339Millis(r.timestamp_ms)},
                     {"triggerReason", Str(TriggerReasonName(r.trigger_reason))},
                     {"sizeBytes", r.size_bytes},
                     {"expireAt", FormatRfc3339Millis(r.expire_at_ms)}});
    }
    PrintJson(out);
    return 0;
  }
  if (rows->empty()) {
    std::printf("no checkpoints for %s\n", o_.agent.c_str());
    return 0;
  }
  Table table({"SEQ", "CHECKPOINT", "TRIGGER", "SIZE", "AGE", "TAKEN"}, {0, 3});
  for (const auto& r : *rows) {
    table.AddRow({std::to_string(r.sequence_number), r.checkpoint_id,
                  Str(TriggerReasonName(r.trigger_reason)), HumanSize(r.size_bytes),
                  HumanAge(now - r.timestamp_ms), FormatRfc3339Millis(r.timestamp_ms)});
  }
  table.Print(stdout);
  return 0;
}

int StoreCommands::Show(CheckpointStore* store) {
  StatusOr<Checkpoint> cp = NotFoundError("no checkpoint");
  if (o_.which == "latest") {
    auto latest = store->GetLatestVerified(o_.agent);
    if (!latest.ok()) return ReportError("show", latest.status());
    for (const auto& s : latest->skipped) {
      std::fprintf(stderr, "skipped corrupted checkpoint %lld %s: %s\n",
                   static_cast<long long>(s.sequence_number), s.checkpoint_id.c_str(),
                   s.reason.c_str());
    }
    cp = latest->checkpoint;
  } else if (!o_.which.empty() && o_.which.size() < 19 &&
             o_.which.find_first_not_of("0123456789") == std::string::npos) {
    cp = store->GetBySequence(o_.agent, std::atoll(o_.which.c_str()));
  } else {
    cp = store->GetById(o_.agent, o_.which);
  }
  if (!cp.ok()) return ReportError("show", cp.status());
  if (o_.json) {
    PrintJson(CheckpointToJsonValue(*cp, true));
    return 0;
  }
  const int64_t now = Env::Default()->NowUnixMillis();
  Table t({"checkpoint", cp->checkpoint_id + " (sequence " + std::to_string(cp->sequence_number) +
                             ", verified)"});
  t.AddRow({"taken", FormatRfc3339Millis(cp->timestamp_ms) + " (" +
                         HumanAge(now - cp->timestamp_ms) + "), trigger " +
                         Str(TriggerReasonName(cp->trigger_reason))});
  t.AddRow(
      {"size", HumanSize(cp->size_bytes) + ", expires " + FormatRfc3339Millis(cp->expire_at_ms)});
  if (cp->active_task) {
    t.AddRow({"task", cp->active_task->task_id + " \"" + cp->active_task->title + "\" " +
                          Str(TaskPhaseName(cp->active_task->phase)) + " " +
                          std::to_string(cp->active_task->progress) + "%"});
  }
  const auto& c = cp->context_summary;
  t.AddRow({"plan", std::to_string(c.plan_outline.size()) + " steps, " +
                        std::to_string(c.completed_steps) + " done"});
  t.AddRow({"draft", HumanSize(static_cast<int64_t>(c.draft_content.size())) + "; " +
                         std::to_string(c.tool_call_log.size()) + " tool calls"});
  if (cp->nats_position) {
    const NatsPosition& p = *cp->nats_position;
    t.AddRow({"nats", p.stream_name + "/" + p.consumer_name + " ack floor " +
                          std::to_string(p.last_acked_sequence) + ", " +
                          std::to_string(p.pending_message_count) + " pending"});
  }
  t.AddRow({"sha256", cp->content_sha256});
  t.Print(stdout);
  return 0;
}

int StoreCommands::Verify(CheckpointStore* store) {
  auto rows = store->List(o_.agent, 1000000);
  if (!rows.ok()) return ReportError("verify", rows.status());
  Progress progress;
  int bad = 0;
  json results = json::array();
  Table table({"SEQ", "CHECKPOINT", "RESULT"}, {0});
  const int64_t total = static_cast<int64_t>(rows->size());
  int64_t done = 0;
  for (const auto& r : *rows) {
    progress.Count("verifying", done, total);
    auto cp = store->GetBySequence(o_.agent, r.sequence_number);
    ++done;
    if (!cp.ok() && cp.status().code() == StatusCode::kUnavailable) {
      progress.Done();
      return ReportError("verify", cp.status());
    }
    const std::string verdict = cp.ok() ? "ok" : cp.status().ToString();
    if (!cp.ok()) ++bad;
    results.push_back({{"sequenceNumber", r.sequence_number},
                       {"checkpointId", r.checkpoint_id},
                       {"ok", cp.ok()},
                       {"reason", cp.ok() ? "" : verdict}});
    table.AddRow({std::to_string(r.sequence_number), r.checkpoint_id, verdict});
  }
  progress.Count("verifying", done, total);
  progress.Done();
  if (o_.json) {
    PrintJson(
        {{"agentId", o_.agent}, {"checked", total}, {"corrupted", bad}, {"results", results}});
  } else {
    if (table.rows() > 1) table.Print(stdout);
    std::printf("%lld checked, %d corrupted\n", static_cast<long long>(total), bad);
  }
  return bad == 0 ? 0 : 1;
}

int StoreCommands::Prune(CheckpointStore* store) {
  Progress progress;
  progress.Update("pruning checkpoints of " + o_.agent + " ...", true);
  auto n = store->Prune(o_.agent, o_.keep);
  progress.Done();
  if (!n.ok()) return ReportError("prune", n.status());
  if (o_.json) {
    PrintJson({{"agentId", o_.agent}, {"deleted", *n}, {"keep", o_.keep}});
  } else {
    std::printf("deleted %d checkpoint(s) of %s, kept the newest %d\n", *n, o_.agent.c_str(),
                o_.keep);
  }
  return 0;
}

int StoreCommands::Status(CheckpointStore* store) {
  auto rec = store->GetAgent(o_.agent);
  if (!rec.ok()) return ReportError("status", rec.status());
  if (o_.json) {
    PrintJson({{"agentId", rec->agent_id},
               {"status", rec->status},
               {"updatedAt",
                rec->updated_at_ms ? json(FormatRfc3339Millis(rec->updated_at_ms)) : json(nullptr)},
               {"lastSequence", rec->last_sequence}});
    return 0;
  }
  const int64_t now = Env::Default()->NowUnixMillis();
  Table t({"agent", rec->agent_id});
  t.AddRow({"status", rec->status.empty() ? "(none)" : rec->status});
  t.AddRow({"updated", rec->updated_at_ms ? FormatRfc3339Millis(rec->updated_at_ms) + " (" +
                                                HumanAge(now - rec->updated_at_ms) + ")"
                                          : "never"});
  t.AddRow({"last sequence", std::to_string(rec->last_sequence)});
  t.Print(stdout);
  return 0;
}

}  // namespace agentckpt
