// Fits a prompt made of sections into a token budget by cutting the least important sections
// first. Used by the restoration prompt builder; independent of what the sections say.
//
// A section is either a list of items (lines or blocks, each ending in '\n') of which whole items
// are left out, or one text cut by bytes (its head or its tail kept, never inside a UTF-8
// character). A cut section says how much was left out. Sections with cut_rank 0 are never cut;
// the others are cut in two passes, each in decreasing cut_rank and each cut as small as
// needed: first down to their min_keep (so that every section keeps its most useful part), then,
// if that is not enough, down to nothing. If the budget is still
// exceeded when every cuttable section is empty, the end of the whole text is cut (by bytes,
// UTF-8 safe): the result is never over budget. Pure and deterministic; thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace agentckpt {

struct PromptSection {
  std::string name;     // for the report of what was cut, e.g. "toolCalls"
  std::string heading;  // rendered first, whatever is cut (may be empty)
  std::string footer;   // rendered last, whatever is cut (e.g. the blank line after a section)
  int cut_rank = 0;     // 0: never cut; higher ranks are cut first
  size_t min_keep = 0;  // items (or bytes of text) kept by the first pass

  // List form: whole items are left out, in drop_order (indices into items; items not listed are
  // left out last, from the end). Kept items stay in their original order.
  std::vector<std::string> items;
  std::vector<size_t> drop_order;
  std::string left_out_noun = "entries";  // "(3 entries left out to fit the token limit)"

  // Text form (used when is_text): `text` is cut by bytes; keep_tail keeps its end.
  bool is_text = false;
  std::string text;
  bool keep_tail = false;
};

struct FittedPrompt {
  std::string text;
  size_t tokens = 0;             // by the counter, <= the budget
  std::vector<std::string> cut;  // names of the sections that were cut, in first-cut order
  bool hard_cut = false;         // the end of the whole text had to be cut
};

// Renders `sections` in order within `max_tokens` as counted by `count`. Sections are measured
// one by one and the sum of their counts is kept within the budget (then the whole text is
// measured once more). This needs count(a + b) <= count(a) + count(b) when `a` ends with a
// newline, as every rendered section does; the exact counter (restore/token_counter.h) gives
// equality when `b` starts with printable ASCII other than ' ' and '/', as section headings do.
// Whatever `count` does, the result is never over budget (the end cut above).
FittedPrompt FitSections(const std::vector<PromptSection>& sections, size_t max_tokens,
                         const std::function<size_t(std::string_view)>& count);

}  // namespace agentckpt
