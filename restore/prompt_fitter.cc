#include "restore/prompt_fitter.h"

#include <algorithm>

#include "common/utf8.h"

namespace agentckpt {
namespace {

// How much of a section can be left out: items, or bytes of text.
size_t MaxDrop(const PromptSection& s) { return s.is_text ? s.text.size() : s.items.size(); }

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The last `keep` bytes of `text`, moved forward to the start of a character.
std::string_view Utf8TailBytes(std::string_view text, size_t keep) {
  size_t start = text.size() - std::min(keep, text.size());
  while (start < text.size() && IsContinuationByte(text[start])) ++start;
  return text.substr(start);
}

std::string RenderText(const PromptSection& s, size_t drop) {
  std::string out = s.heading;
  if (drop == 0) {
    out += s.text;
  } else if (s.keep_tail) {
    std::string_view kept = Utf8TailBytes(s.text, s.text.size() - drop);
    out += "[... " + std::to_string(s.text.size() - kept.size()) +
           " earlier bytes left out to fit the token limit]\n";
    out += kept;
  } else {
    std::string_view kept = Utf8TruncateBytes(s.text, s.text.size() - drop);
    out += kept;
    out += "\n[... " + std::to_string(s.text.size() - kept.size()) +
           " more bytes left out to fit the token limit]";
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out + s.footer;
}

std::string RenderItems(const PromptSection& s, size_t drop) {
  std::vector<bool> dropped(s.items.size(), false);
  size_t done = 0;
  for (size_t idx : s.drop_order) {
    if (done == drop) break;
    if (idx < s.items.size() && !dropped[idx]) {
      dropped[idx] = true;
      ++done;
    }
  }
  for (size_t idx = s.items.size(); idx-- > 0 && done < drop;) {
    if (!dropped[idx]) {
      dropped[idx] = true;
      ++done;
    }
  }
  std::string out = s.heading;
  for (size_t i = 0; i < s.items.size(); ++i) {
    if (!dropped[i]) out += s.items[i];
  }
  if (drop > 0) {
    out +=
        "(" + std::to_string(drop) + " " + s.left_out_noun + " left out to fit the token limit)\n";
  }
  return out + s.footer;
}

std::string RenderSection(const PromptSection& s, size_t drop) {
  return s.is_text ? RenderText(s, drop) : RenderItems(s, drop);
}

std::string Render(const std::vector<PromptSection>& sections, const std::vector<size_t>& drops) {
  std::string out;
  for (size_t i = 0; i < sections.size(); ++i) out += RenderSection(sections[i], drops[i]);
  return out;
}

}  // namespace

FittedPrompt FitSections(const std::vector<PromptSection>& sections, size_t max_tokens,
                         const std::function<size_t(std::string_view)>& count) {
  // Each section is measured on its own and the sum kept within the budget, so that a trial cut
  // only re-measures the section being cut.
  std::vector<size_t> drops(sections.size(), 0);
  std::vector<size_t> cost(sections.size(), 0);
  size_t total = 0;
  for (size_t i = 0; i < sections.size(); ++i) {
    cost[i] = count(RenderSection(sections[i], 0));
    total += cost[i];
  }
  FittedPrompt result;

  // Cut order: highest cut_rank first; equal ranks in section order.
  std::vector<size_t> order;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].cut_rank > 0 && MaxDrop(sections[i]) > 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sections[a].cut_rank > sections[b].cut_rank; });

  for (bool keep_minimum : {true, false}) {
    for (size_t idx : order) {
      if (total <= max_tokens) break;
      const PromptSection& s = sections[idx];
      size_t max_drop = MaxDrop(s);
      if (keep_minimum) max_drop -= std::min(max_drop, s.min_keep);
      if (max_drop <= drops[idx]) continue;
      if (std::find(result.cut.begin(), result.cut.end(), s.name) == result.cut.end()) {
        result.cut.push_back(s.name);
      }
      const size_t others = total - cost[idx];
      auto cost_at = [&](size_t drop) { return count(RenderSection(s, drop)); };
      size_t lo = drops[idx] + 1, hi = max_drop;
      size_t hi_cost = cost_at(hi);
      if (others + hi_cost <= max_tokens) {
        while (lo < hi) {  // the smallest cut that fits
          size_t mid = lo + (hi - lo) / 2;
          size_t mid_cost = cost_at(mid);
          if (others + mid_cost <= max_tokens) {
            hi = mid;
            hi_cost = mid_cost;
          } else {
            lo = mid + 1;
          }
        }
      }  // else: not enough even at the most; cut the next section too
      drops[idx] = hi;
      cost[idx] = hi_cost;
      total = others + hi_cost;
    }
  }

  result.text = Render(sections, drops);
  result.tokens = count(result.text);
  if (result.tokens > max_tokens) {
    // The never-cut sections alone are too long (every cuttable one is empty by now, so no
    // fenced block is left): keep the longest prefix that fits.
    result.hard_cut = true;
    size_t lo = 0, hi = result.text.size();
    while (lo < hi) {
      size_t mid = lo + (hi - lo + 1) / 2;
      if (count(Utf8TruncateBytes(result.text, mid)) <= max_tokens) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    result.text = std::string(Utf8TruncateBytes(result.text, lo));
    result.tokens = count(result.text);
  }
  return result;
}

}  // namespace agentckpt
