#include "cli/store_commands.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "checkpoint/canonical.h"
#include "checkpoint/checkpoint_json.h"
#include "common/env.h"
#include "common/time_format.h"
#include "store/checkpoint_store.h"

namespace agentckpt {
namespace {

using nlohmann::json;

std::string DefaultStore(const std::string& agent) {
  const char* env = std::getenv("CKPT_STORE");
  if (env != nullptr && *env != '\0') return env;
  return "sqlite://agentckpt-data/" + agent + ".db";
}

int StoreExit(const agentckpt::Status& s) {
  std::fprintf(stderr, "agentckpt: %s\n", s.ToString().c_str());
  switch (s.code()) {
    case StatusCode::kInvalidArgument: return 2;
    case StatusCode::kUnavailable: return 3;
    default: return 1;
  }
}

}  // namespace

std::string HumanSize(int64_t bytes) {
  char buf[32];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(bytes));
  } else if (bytes < 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f KB", static_cast<double>(bytes) / 1024);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f MB", static_cast<double>(bytes) / (1024 * 1024));
  }
  return buf;
}

std::string HumanAge(int64_t age_ms) {
  int64_t s = age_ms / 1000;
  char buf[32];
  if (s < 0) return "in the future";
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%llds ago", static_cast<long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%lld min ago", static_cast<long long>(s / 60));
  } else if (s < 86400) {
    std::snprintf(buf, sizeof(buf), "%lld h ago", static_cast<long long>(s / 3600));
  } else {
    std::snprintf(buf, sizeof(buf), "%lld d ago", static_cast<long long>(s / 86400));
  }
  return buf;
}

StoreCommands::StoreCommands(CLI::App* app) {
  auto common = [this](CLI::App* sub, bool with_json) {
    sub->add_option("--agent", o_.agent, "Agent id")->required();
    sub->add_option("--store", o_.store,
                    "Store URL (default: $CKPT_STORE, else sqlite://agentckpt-data/ID.db)");
    if (with_json) sub->add_flag("--json", o_.json, "Machine-readable JSON output");
  };
  list_ = app->add_subcommand("list", "List an agent's checkpoints, newest first");
  common(list_, true);
  list_->add_option("--limit", o_.limit, "How many (default 20)")->check(CLI::Range(1, 100000));
  show_ = app->add_subcommand("show", "Show one checkpoint (verified): an id, or 'latest'");
  common(show_, true);
  show_->add_option("which", o_.which, "Checkpoint id, sequence number or 'latest'")->required();
  verify_ = app->add_subcommand("verify", "Verify every checkpoint of an agent (exit 1 if any "
                                          "is corrupted)");
  common(verify_, true);
  prune_ = app->add_subcommand("prune", "Delete all but the newest N checkpoints of an agent");
  common(prune_, false);
  prune_->add_option("--keep", o_.keep, "How many to keep")->required()->check(CLI::Range(1, 1000000));
  status_ = app->add_subcommand("status", "Show the agent's status record");
  common(status_, true);
}

bool StoreCommands::Selected() const {
  return list_->parsed() || show_->parsed() || verify_->parsed() || prune_->parsed() ||
         status_->parsed();
}

int StoreCommands::Execute() {
  if (o_.store.empty()) o_.store = DefaultStore(o_.agent);
  if (list_->parsed()) return List();
  if (show_->parsed()) return Show();
  if (verify_->parsed()) return Verify();
  if (prune_->parsed()) return Prune();
  return Status();
}

int StoreCommands::List() {
  auto store = OpenStore(o_.store);
  if (!store.ok()) return StoreExit(store.status());
  auto rows = (*store)->List(o_.agent, o_.limit);
  if (!rows.ok()) return StoreExit(rows.status());
  int64_t now = Env::Default()->NowUnixMillis();
  if (o_.json) {
    json out = json::array();
    for (const auto& r : *rows) {
      out.push_back({{"checkpointId", r.checkpoint_id}, {"sequenceNumber", r.sequence_number},
                     {"timestamp", FormatRfc3339Millis(r.timestamp_ms)},
                     {"triggerReason", TriggerReasonName(r.trigger_reason)},
                     {"sizeBytes", r.size_bytes}, {"expireAt", FormatRfc3339Millis(r.expire_at_ms)}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("%-8s  %-36s  %-17s  %9s  %s\n", "SEQ", "CHECKPOINT", "TRIGGER", "SIZE", "AGE");
  for (const auto& r : *rows) {
    std::printf("%-8lld  %-36s  %-17s  %9s  %s\n", static_cast<long long>(r.sequence_number),
                r.checkpoint_id.c_str(), std::string(TriggerReasonName(r.trigger_reason)).c_str(),
                HumanSize(r.size_bytes).c_str(), HumanAge(now - r.timestamp_ms).c_str());
  }
  if (rows->empty()) std::printf("(no checkpoints for %s)\n", o_.agent.c_str());
  return 0;
}

int StoreCommands::Show() {
  auto store = OpenStore(o_.store);
  if (!store.ok()) return StoreExit(store.status());
  StatusOr<Checkpoint> cp = NotFoundError("no checkpoint");
  if (o_.which == "latest") {
    auto latest = (*store)->GetLatestVerified(o_.agent);
    if (!latest.ok()) return StoreExit(latest.status());
    for (const auto& s : latest->skipped) {
      std::fprintf(stderr, "skipped corrupted checkpoint %lld %s: %s\n",
                   static_cast<long long>(s.sequence_number), s.checkpoint_id.c_str(),
                   s.reason.c_str());
    }
    cp = latest->checkpoint;
  } else if (!o_.which.empty() && o_.which.find_first_not_of("0123456789") == std::string::npos) {
    cp = (*store)->GetBySequence(o_.agent, std::atoll(o_.which.c_str()));
  } else {
    cp = (*store)->GetById(o_.agent, o_.which);
  }
  if (!cp.ok()) return StoreExit(cp.status());
  if (o_.json) {
    std::printf("%s\n", CheckpointToJsonValue(*cp, true).dump(2).c_str());
    return 0;
  }
  int64_t now = Env::Default()->NowUnixMillis();
  std::printf("checkpoint   %s (sequence %lld, verified)\n", cp->checkpoint_id.c_str(),
              static_cast<long long>(cp->sequence_number));
  std::printf("taken        %s (%s), trigger %s\n", FormatRfc3339Millis(cp->timestamp_ms).c_str(),
              HumanAge(now - cp->timestamp_ms).c_str(),
              std::string(TriggerReasonName(cp->trigger_reason)).c_str());
  std::printf("size         %s, expires %s\n", HumanSize(cp->size_bytes).c_str(),
              FormatRfc3339Millis(cp->expire_at_ms).c_str());
  if (cp->active_task) {
    std::printf("task         %s \"%s\" %s %d%%\n", cp->active_task->task_id.c_str(),
                cp->active_task->title.c_str(),
                std::string(TaskPhaseName(cp->active_task->phase)).c_str(),
                cp->active_task->progress);
  }
  const auto& c = cp->context_summary;
  std::printf("plan         %zu steps, %lld done\n", c.plan_outline.size(),
              static_cast<long long>(c.completed_steps));
  std::printf("draft        %zu bytes; tool calls %zu\n", c.draft_content.size(),
              c.tool_call_log.size());
  if (cp->nats_position) {
    std::printf("nats         %s/%s ack floor %llu, %llu pending\n",
                cp->nats_position->stream_name.c_str(), cp->nats_position->consumer_name.c_str(),
                static_cast<unsigned long long>(cp->nats_position->last_acked_sequence),
                static_cast<unsigned long long>(cp->nats_position->pending_message_count));
  }
  std::printf("sha256       %s\n", cp->content_sha256.c_str());
  return 0;
}

int StoreCommands::Verify() {
  auto store = OpenStore(o_.store);
  if (!store.ok()) return StoreExit(store.status());
  auto rows = (*store)->List(o_.agent, 1000000);
  if (!rows.ok()) return StoreExit(rows.status());
  int bad = 0;
  json results = json::array();
  for (const auto& r : *rows) {
    auto cp = (*store)->GetBySequence(o_.agent, r.sequence_number);
    std::string verdict = cp.ok() ? "ok" : cp.status().ToString();
    if (!cp.ok()) ++bad;
    if (o_.json) {
      results.push_back({{"sequenceNumber", r.sequence_number},
                         {"checkpointId", r.checkpoint_id},
                         {"ok", cp.ok()},
                         {"reason", cp.ok() ? "" : verdict}});
    } else {
      std::printf("%-8lld  %-36s  %s\n", static_cast<long long>(r.sequence_number),
                  r.checkpoint_id.c_str(), verdict.c_str());
    }
  }
  if (o_.json) {
    std::printf("%s\n", json{{"checked", rows->size()}, {"corrupted", bad}, {"results", results}}
                            .dump(2)
                            .c_str());
  } else {
    std::printf("%zu checked, %d corrupted\n", rows->size(), bad);
  }
  return bad == 0 ? 0 : 1;
}

int StoreCommands::Prune() {
  auto store = OpenStore(o_.store);
  if (!store.ok()) return StoreExit(store.status());
  auto n = (*store)->Prune(o_.agent, o_.keep);
  if (!n.ok()) return StoreExit(n.status());
  std::printf("deleted %d checkpoint(s) of %s, kept the newest %d\n", *n, o_.agent.c_str(),
              o_.keep);
  return 0;
}

int StoreCommands::Status() {
  auto store = OpenStore(o_.store);
  if (!store.ok()) return StoreExit(store.status());
  auto rec = (*store)->GetAgent(o_.agent);
  if (!rec.ok()) return StoreExit(rec.status());
  if (o_.json) {
    std::printf("%s\n", json{{"agentId", rec->agent_id}, {"status", rec->status},
                             {"updatedAt", FormatRfc3339Millis(rec->updated_at_ms)},
                             {"lastSequence", rec->last_sequence}}
                            .dump(2)
                            .c_str());
    return 0;
  }
  std::printf("agent          %s\nstatus         %s\nupdated        %s\nlast sequence  %lld\n",
              rec->agent_id.c_str(), rec->status.empty() ? "(none)" : rec->status.c_str(),
              rec->updated_at_ms ? HumanAge(Env::Default()->NowUnixMillis() - rec->updated_at_ms).c_str() : "never",
              static_cast<long long>(rec->last_sequence));
  return 0;
}

}  // namespace agentckpt
