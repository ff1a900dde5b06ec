// The restoration prompt: what the agent reads after a restart to continue where it stopped.
//
// Sections, in this order: opening (checkpoint used, or cold start), tool calls whose outcome is
// unknown (the ledger's open calls: verify and reconcile before any retry), warnings (stale
// checkpoint: re-verify external state; corrupted checkpoints skipped and why; replay unavailable
// or truncated; workspace stashed; cold start), active task with phase and progress, plan with the
// steps done and the next one, gathered results, where the draft stands (its size and its end),
// recent tool calls (failures first, newest first), write calls completed since the checkpoint
// (done), what happened since the checkpoint (handled
// messages: do not redo; pending messages: will be delivered, with count and subjects; replayed
// bodies as fenced untrusted data, see untrusted_fence.h), workspace state.
//
// Budget: the prompt is at most `max_tokens` tokens under `tokenizer`, counted exactly
// (restore/token_counter.h). When the full prompt is longer, sections are cut in this order until
// it fits: bodies of pending messages, bodies of handled messages, gathered results, tool calls,
// workspace file list, draft, plan (done steps first). Opening, warnings, task and the message
// counts are never cut (only if they alone exceed the budget is the text's end cut). Cuts never
// split a UTF-8 character and never leave a fence open. Deterministic: the same input gives the
// same bytes (nothing here reads a clock or randomness; the fence nonce is derived from the
// content). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "replay/replay_source.h"
#include "restore/token_counter.h"
#include "store/checkpoint_store.h"

namespace agentckpt {

struct PromptInput {
  std::string agent_id;
  const Checkpoint* checkpoint = nullptr;  // borrowed; null on a cold start
  int64_t checkpoint_age_ms = 0;           // restore time minus the checkpoint's timestamp
  bool stale = false;
  int64_t stale_after_ms = 900'000;
  std::vector<SkippedCheckpoint> skipped;  // corrupted newer checkpoints passed over
  // The journal folded in after the checkpoint (count, sequence, where it stopped); "" if none.
  std::string journal_note;
  // Write calls the journal after the checkpoint completed (docs/tool-call-ledger.md).
  std::vector<LedgerCall> completed_writes;

  bool replay_configured = false;        // false: no JetStream consumer for this agent
  const ReplayResult* replay = nullptr;  // borrowed; null if the replay did not run or failed
  std::string replay_error;              // why it failed (when configured and replay is null)

  std::optional<Workspace> workspace_now;  // the working tree as found at restore time
  std::string workspace_error;             // why it could not be read, if it could not
  bool workspace_stashed = false;
  // Uncommitted changes the checkpoint does not account for, left in place (not the agent's
  // own start: see WorkspaceAction in restorer.h).
  bool workspace_conflict_left = false;
  std::string stash_message;
  std::string stash_commit;  // hex id of the stash commit
};

struct PromptOptions {
  size_t max_tokens = 4000;                             // CKPT_PROMPT_MAX_TOKENS
  TokenEncoding tokenizer = TokenEncoding::kO200kBase;  // CKPT_TOKENIZER
  size_t message_body_max_bytes = 600;                  // per replayed body shown in the prompt
  size_t draft_tail_chars = 1500;    // the end of the draft shown (before any cut)
  size_t modified_files_shown = 40;  // workspace files listed (before any cut)
};

struct RestorationPrompt {
  std::string text;
  size_t tokens = 0;             // CountTokens(text, tokenizer) <= max_tokens
  std::vector<std::string> cut;  // sections shortened to fit, in cut order
};

// Builds the prompt for `in` within `opts.max_tokens`.
RestorationPrompt BuildRestorationPrompt(const PromptInput& in, const PromptOptions& opts);

}  // namespace agentckpt
