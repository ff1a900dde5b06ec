// The tool-call ledger's prompt sections (restore/prompt_sections.h; docs/tool-call-ledger.md
// "Restore"): calls whose outcome is unknown, first, and write calls completed since the
// checkpoint.
#include <string>

#include "common/time_format.h"
#include "restore/prompt_sections.h"

namespace agentckpt {
namespace {

// At most this many calls are listed per section; the rest are counted.
constexpr size_t kListedCalls = 20;

std::string CallLine(const LedgerCall& c) {
  return "- " + SafeText(c.tool_name, true) + " (" + std::string(ToolEffectName(c.effect)) +
         "), call " + c.call_id + ", key " + Quote(c.idempotency_key) + ", args sha256 " +
         (c.args_sha256.empty() ? std::string("not given") : c.args_sha256) + ", begun " +
         FormatRfc3339Millis(c.began_at_ms);
}

}  // namespace

PromptSection OutcomeUnknownSection(const PromptInput& in) {
  PromptSection s;
  s.name = "outcomeUnknown";
  if (in.checkpoint == nullptr || !in.checkpoint->ledger || in.checkpoint->ledger->open.empty()) {
    return s;
  }
  const auto& open = in.checkpoint->ledger->open;
  s.heading = "## Tool calls with an UNKNOWN outcome (" + std::to_string(open.size()) +
              ")\nThese calls were begun and never ended before the restart: they may or may not "
              "have taken effect. Do not retry a write call blindly: first verify in the target "
              "system whether its effect happened, then record what you found with POST "
              "/v1/tool-calls/{callId}/reconcile (succeeded, failed, or not_executed, which frees "
              "its key for a new attempt). Until then a begin with the same key answers 409 "
              "OUTCOME_UNKNOWN.\n";
  for (size_t i = 0; i < open.size() && i < kListedCalls; ++i) {
    const LedgerCall& c = open[i];
    s.items.push_back(CallLine(c) +
                      (c.effect == ToolEffect::kWrite ? ": VERIFY AND RECONCILE before any retry"
                                                      : ": reconcile it") +
                      "\n");
  }
  if (open.size() > kListedCalls) {
    s.items.push_back("- and " + std::to_string(open.size() - kListedCalls) +
                      " more: GET /v1/tool-calls?state=outcome_unknown\n");
  }
  s.footer = "\n";
  return s;
}

PromptSection CompletedWritesSection(const PromptInput& in) {
  PromptSection s;
  s.name = "completedWrites";
  if (in.completed_writes.empty()) return s;
  s.cut_rank = kRankToolCalls;
  s.min_keep = kKeepToolCalls;
  s.left_out_noun = "completed write calls";
  s.heading = "## Write calls completed since the checkpoint (" +
              std::to_string(in.completed_writes.size()) +
              "; done: do not repeat them, a begin with the same key replays the result)\n";
  for (size_t i = 0; i < in.completed_writes.size() && i < kListedCalls; ++i) {
    const LedgerCall& c = in.completed_writes[i];
    const bool ok = c.result && c.result->success;
    s.items.push_back(CallLine(c) + ", ended " + FormatRfc3339Millis(c.ended_at_ms) + ": " +
                      (ok ? "succeeded" : "failed") +
                      (c.result && c.result->reconciled ? " (reconciled)" : "") + "\n");
  }
  s.footer = "\n";
  return s;
}

}  // namespace agentckpt
