#include "redact/redactor.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "redact/builtin_rules.h"

namespace agentckpt {

using redact_internal::Span;

namespace {

constexpr std::string_view kMarkerStart = "[REDACTED:";

bool IsRuleNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The [begin, end) ranges of markers already in `text`.
std::vector<std::pair<size_t, size_t>> MarkerRanges(std::string_view text) {
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t pos = text.find(kMarkerStart); pos != std::string_view::npos;
       pos = text.find(kMarkerStart, pos + 1)) {
    size_t p = pos + kMarkerStart.size();
    while (p < text.size() && IsRuleNameChar(text[p])) ++p;
    if (p < text.size() && text[p] == ']') ranges.emplace_back(pos, p + 1);
  }
  return ranges;
}

bool OverlapsMarker(const Span& s, const std::vector<std::pair<size_t, size_t>>& markers) {
  for (const auto& [b, e] : markers) {
    if (s.begin < e && b < s.end) return true;
  }
  return false;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

Redactor::Redactor(Observer observer) : observer_(std::move(observer)) {}

std::string Redactor::Marker(std::string_view rule) {
  return std::string(kMarkerStart) + std::string(rule) + "]";
}

std::vector<std::string> Redactor::BuiltinRuleNames() {
  std::vector<std::string> names;
  for (int r = 0; r < redact_internal::kBuiltinRuleCount; ++r) {
    names.emplace_back(redact_internal::BuiltinRuleName(r));
  }
  return names;
}

std::string_view Redactor::RuleName(int rule) const {
  if (rule < redact_internal::kBuiltinRuleCount) return redact_internal::BuiltinRuleName(rule);
  return extra_[static_cast<size_t>(rule - redact_internal::kBuiltinRuleCount)].name;
}

Status Redactor::AddPatterns(std::string_view file_text) {
  std::vector<Pattern> added;
  std::istringstream in{std::string(file_text)};
  std::string raw;
  int line_no = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    std::string line = Trim(raw);
    if (line.empty() || line[0] == '#') continue;
    std::string where = "line " + std::to_string(line_no) + ": ";
    size_t eq = line.find('=');
    if (eq == std::string::npos) return InvalidArgumentError(where + "expected name=regex");
    std::string name = Trim(std::string_view(line).substr(0, eq));
    std::string regex = line.substr(eq + 1);
    if (name.empty() || name.size() > 64 ||
        !std::all_of(name.begin(), name.end(), IsRuleNameChar)) {
      return InvalidArgumentError(where + "the name must be 1-64 of [A-Za-z0-9_-], got \"" + name +
                                  "\"");
    }
    if (regex.empty()) return InvalidArgumentError(where + "empty regex for \"" + name + "\"");
    try {
      added.push_back({name, std::regex(regex, std::regex::ECMAScript | std::regex::optimize)});
    } catch (const std::regex_error& e) {
      return InvalidArgumentError(where + "bad regex for \"" + name + "\": " + e.what());
    }
  }
  for (Pattern& p : added) extra_.push_back(std::move(p));
  return OkStatus();
}

Status Redactor::AddPatternsFromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgumentError("cannot read \"" + path + "\"");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return InvalidArgumentError("cannot read \"" + path + "\"");
  return AddPatterns(text.str());
}

std::string Redactor::Redact(std::string_view text) const {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  std::vector<Span> spans;
  redact_internal::ScanBuiltin(text, lower, &spans);
  if (!extra_.empty()) {
    std::string owned(text);
    for (size_t i = 0; i < extra_.size(); ++i) {
      int rule = redact_internal::kBuiltinRuleCount + static_cast<int>(i);
      for (auto it = std::sregex_iterator(owned.begin(), owned.end(), extra_[i].regex);
           it != std::sregex_iterator(); ++it) {
        size_t b = static_cast<size_t>(it->position(0));
        size_t e = b + static_cast<size_t>(it->length(0));
        if (e == b) continue;
        while (b > 0 && IsContinuationByte(text[b])) --b;  // whole characters only
        while (e < text.size() && IsContinuationByte(text[e])) ++e;
        spans.push_back({b, e, rule});
      }
    }
  }
  if (spans.empty()) return std::string(text);
  // Leftmost first; at the same start the longest, then the most specific rule.
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.end != b.end) return a.end > b.end;
    return a.rule < b.rule;
  });
  std::vector<std::pair<size_t, size_t>> markers = MarkerRanges(text);
  std::string out;
  out.reserve(text.size());
  std::map<int, uint64_t> counts;
  size_t copied = 0;
  for (const Span& s : spans) {
    if (s.begin < copied || s.end <= s.begin || OverlapsMarker(s, markers)) continue;
    out.append(text.substr(copied, s.begin - copied));
    out += Marker(RuleName(s.rule));
    copied = s.end;
    ++counts[s.rule];
  }
  out.append(text.substr(copied));
  if (observer_) {
    for (const auto& [rule, n] : counts) observer_(std::string(RuleName(rule)), n);
  }
  return out;
}

bool Redactor::RedactInPlace(std::string* text) const {
  std::string out = Redact(*text);
  if (out == *text) return false;
  *text = std::move(out);
  return true;
}

void Redactor::RedactJson(nlohmann::json* value) const {
  if (value->is_string()) {
    RedactInPlace(value->get_ptr<std::string*>());
  } else if (value->is_array() || value->is_object()) {
    for (auto& item : *value) RedactJson(&item);
  }
}

}  // namespace agentckpt
