#include "restore/prompt_builder.h"

#include <algorithm>
#include <string_view>

#include "common/time_format.h"
#include "common/utf8.h"
#include "gate/gate_record.h"
#include "restore/prompt_fitter.h"
#include "restore/prompt_sections.h"
#include "restore/token_counter.h"

namespace agentckpt {
namespace {

// Tool call summaries are shortened in the prompt (the checkpoint keeps 200 and 500 characters).
constexpr size_t kToolInputChars = 120;
constexpr size_t kToolOutputChars = 240;

// The first `n` characters of `s`, with "..." when cut.
std::string Shorten(const std::string& s, size_t n) {
  std::string valid = Utf8Sanitize(s);
  std::string_view head = Utf8TruncateChars(valid, n);
  return head.size() == valid.size() ? valid : std::string(head) + "...";
}

PromptSection Fixed(std::string name, std::string text) {
  PromptSection s;
  s.name = std::move(name);
  s.heading = std::move(text);
  return s;
}

PromptSection OpeningSection(const PromptInput& in) {
  std::string t = "# Restoration after a restart\n\n";
  if (in.checkpoint == nullptr) {
    t += "No checkpoint was found for agent " + in.agent_id +
         ": this is a cold start. No earlier context is available; rebuild it from the source "
         "data before acting.\n\n";
    return Fixed("opening", t);
  }
  const Checkpoint& cp = *in.checkpoint;
  t += "Your process restarted. Your working context was restored from checkpoint " +
       cp.checkpoint_id + " (sequence " + std::to_string(cp.sequence_number) + ", taken " +
       FormatRfc3339Millis(cp.timestamp_ms) + ", " + FormatAge(in.checkpoint_age_ms) +
       " before this restoration, trigger " + std::string(TriggerReasonName(cp.trigger_reason)) +
       "). Continue from where it stopped: do not repeat completed steps, recorded tool calls "
       "with side effects, or messages listed as handled.\n\n";
  return Fixed("opening", t);
}

PromptSection TaskSection(const Checkpoint& cp) {
  std::string t = "## Active task\n";
  if (!cp.active_task) {
    t += "No active task was recorded.\n\n";
    return Fixed("task", t);
  }
  const ActiveTask& task = *cp.active_task;
  t += Quote(task.title) + " (id " + Quote(task.task_id) + "): phase " +
       std::string(TaskPhaseName(task.phase)) + ", " + std::to_string(task.progress) +
       "% done, started " + FormatRfc3339Millis(task.started_at_ms) + ".\n\n";
  return Fixed("task", t);
}

PromptSection PlanSection(const ContextSummary& c) {
  PromptSection s;
  s.name = "plan";
  s.cut_rank = kRankPlan;
  s.min_keep = c.plan_outline.size();  // the plan is only cut when everything else is
  s.left_out_noun = "plan steps";
  const size_t n = c.plan_outline.size();
  const size_t done =
      std::min<size_t>(n, static_cast<size_t>(std::max<int64_t>(0, c.completed_steps)));
  s.heading = "## Plan (" + std::to_string(done) + " of " + std::to_string(n) + " steps done)\n";
  if (n == 0) {
    s.heading += "No plan was recorded.\n\n";
    return s;
  }
  for (size_t i = 0; i < n; ++i) {
    const char* mark = i < done ? "[done] " : (i == done ? "[NEXT] " : "[ ] ");
    s.items.push_back(std::to_string(i + 1) + ". " + mark + SafeText(c.plan_outline[i], true) +
                      "\n");
  }
  s.footer = "\n";
  // Done steps go first (oldest first), then later steps from the end; the next step last.
  for (size_t i = 0; i < done; ++i) s.drop_order.push_back(i);
  for (size_t i = n; i-- > done + 1;) s.drop_order.push_back(i);
  if (done < n) s.drop_order.push_back(done);
  return s;
}

PromptSection TextSection(std::string name, int rank, size_t min_keep, std::string heading,
                          std::string text, bool keep_tail) {
  PromptSection s;
  s.name = std::move(name);
  s.cut_rank = rank;
  s.min_keep = min_keep;
  s.is_text = true;
  s.keep_tail = keep_tail;
  s.heading = std::move(heading);
  s.text = std::move(text);
  s.footer = "\n";
  return s;
}

PromptSection GatheredSection(const ContextSummary& c) {
  if (c.gathering_results.empty())
    return Fixed("gathered", "## Gathered results\nNone recorded.\n\n");
  return TextSection("gathered", kRankGathered, kKeepGatheredBytes, "## Gathered results\n",
                     SafeText(c.gathering_results, false), /*keep_tail=*/false);
}

PromptSection DraftSection(const ContextSummary& c, const PromptOptions& opts) {
  const std::string& d = c.draft_content;
  if (d.empty()) return Fixed("draft", "## Draft\nNo draft in progress.\n\n");
  size_t chars = Utf8Length(d);
  size_t shown = std::min(chars, opts.draft_tail_chars);
  std::string tail = Utf8TailChars(d, shown);
  std::string heading = "## Draft\nThe draft is " + std::to_string(chars) + " characters (" +
                        std::to_string(d.size()) + " bytes) long. " +
                        (shown == chars ? std::string("All of it")
                                        : "Its last " + std::to_string(shown) + " characters") +
                        ", ending where work resumes:\n";
  return TextSection("draft", kRankDraft, kKeepDraftBytes, heading, SafeText(tail, false),
                     /*keep_tail=*/true);
}

PromptSection ToolCallSection(const ContextSummary& c) {
  PromptSection s;
  s.name = "toolCalls";
  s.cut_rank = kRankToolCalls;
  s.min_keep = kKeepToolCalls;
  s.left_out_noun = "older tool calls";
  const auto& log = c.tool_call_log;
  if (log.empty()) return Fixed("toolCalls", "## Recent tool calls\nNone recorded.\n\n");
  size_t failed = std::count_if(log.begin(), log.end(), [](const auto& e) { return !e.success; });
  s.heading = "## Recent tool calls (" + std::to_string(log.size()) + ", " +
              std::to_string(failed) + " failed; failures first, then newest first)\n";
  for (bool want_success : {false, true}) {
    for (size_t i = log.size(); i-- > 0;) {
      const ToolCallEntry& e = log[i];
      if (e.success != want_success) continue;
      s.items.push_back(std::string("- ") + (e.success ? "ok " : "FAILED ") +
                        SafeText(e.tool_name, true) + " at " + FormatRfc3339Millis(e.timestamp_ms) +
                        " (" + std::to_string(e.duration_ms) + " ms): input " +
                        Quote(Shorten(e.input_summary, kToolInputChars)) + " -> output " +
                        Quote(Shorten(e.output_summary, kToolOutputChars)) + "\n");
    }
  }
  s.footer = "\n";
  return s;
}

// Approval gates still to act on: pending ones (wait) and decisions not yet consumed (act once,
// then consume). Cut after the plan, keeping the first kKeepGates.
void AppendGatesSection(const Checkpoint& cp, std::vector<PromptSection>* out) {
  if (cp.gates.empty()) return;
  auto gates = GatesFromJson(nlohmann::json::parse(cp.gates, nullptr, false));
  if (!gates.ok()) return;
  PromptSection s;
  s.name = "gates";
  s.cut_rank = kRankGates;
  s.min_keep = kKeepGates;
  s.left_out_noun = "more gates (GET /v1/gates lists them all)";
  for (const Gate& g : *gates) {
    if (!g.consumed) s.items.push_back("- " + SafeText(DescribeGateForPrompt(g), true) + "\n");
  }
  if (s.items.empty()) return;
  s.heading = "## Approval gates (" + std::to_string(s.items.size()) +
              " to act on; each decision is acted on once)\n";
  s.footer = "\n";
  out->push_back(std::move(s));
}

}  // namespace

RestorationPrompt BuildRestorationPrompt(const PromptInput& in, const PromptOptions& opts) {
  std::vector<PromptSection> sections;
  sections.push_back(OpeningSection(in));
  // The ledger's sections are empty when it has nothing to say: left out then.
  auto add_unless_empty = [&sections](PromptSection s) {
    if (!s.heading.empty() || !s.items.empty()) sections.push_back(std::move(s));
  };
  add_unless_empty(OutcomeUnknownSection(in));
  sections.push_back(WarningsSection(in));
  if (in.checkpoint != nullptr) {
    const ContextSummary& c = in.checkpoint->context_summary;
    sections.push_back(TaskSection(*in.checkpoint));
    AppendGatesSection(*in.checkpoint, &sections);
    sections.push_back(PlanSection(c));
    sections.push_back(GatheredSection(c));
    sections.push_back(DraftSection(c, opts));
    sections.push_back(ToolCallSection(c));
    add_unless_empty(CompletedWritesSection(in));
    AppendReplaySections(in, opts, &sections);
  }
  AppendWorkspaceSection(in, opts, &sections);

  TokenCounter counter(opts.tokenizer);  // memoizes: the fitter counts many similar texts
  FittedPrompt fitted = FitSections(
      sections, opts.max_tokens, [&counter](std::string_view text) { return counter.Count(text); });
  RestorationPrompt out;
  out.text = std::move(fitted.text);
  out.tokens = fitted.tokens;
  out.cut = std::move(fitted.cut);
  if (fitted.hard_cut) out.cut.push_back("end");
  return out;
}

}  // namespace agentckpt
