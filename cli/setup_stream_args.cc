// Argument parsing of `agentckpt setup-stream`: subjects and durations.
#include <algorithm>
#include <cctype>
#include <string_view>

#include "cli/setup_stream.h"
#include "common/ids.h"
#include "common/status_macros.h"
#include "nats/subjects.h"

namespace agentckpt {
namespace {

std::vector<std::string> SplitTokens(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    out.emplace_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

StatusOr<std::vector<std::string>> ExpandSetupSubjects(const SetupStreamOptions& options) {
  RETURN_IF_ERROR(ValidateAgentId(options.agent_id));
  const std::string prefix = subjects::AgentPrefix(options.agent_id);
  std::vector<std::string> out;
  for (const std::string& raw : SplitTokens(options.subjects, ',')) {
    std::string subject = Trim(raw);
    for (size_t at; (at = subject.find("{agent}")) != std::string::npos;) {
      subject.replace(at, 7, options.agent_id);
    }
    auto bad = [&](const std::string& why) {
      return InvalidArgumentError("--subjects: \"" + subject + "\" " + why);
    };
    if (subject.empty()) return InvalidArgumentError("--subjects: empty subject");
    std::vector<std::string> tokens = SplitTokens(subject, '.');
    for (size_t i = 0; i < tokens.size(); ++i) {
      const std::string& t = tokens[i];
      bool bad_token = t.empty() || t.find_first_of(" \t\r\n") != std::string::npos ||
                       (t.find_first_of("*>") != std::string::npos && t.size() != 1) ||
                       (t == ">" && i + 1 != tokens.size());
      if (bad_token) return bad("is not a valid NATS subject");
    }
    if (subject.rfind(prefix, 0) != 0 || tokens.size() < 3) {
      return bad("is outside " + prefix +
                 "> (an agent's credentials may use only its own "
                 "subjects)");
    }
    if (tokens[2] == "*" || tokens[2] == ">" || tokens[2] == "checkpoint") {
      return bad("covers " + prefix + "checkpoint.*, the sidecar's own subjects");
    }
    if (std::find(out.begin(), out.end(), subject) != out.end()) return bad("is listed twice");
    out.push_back(subject);
  }
  return out;
}

StatusOr<int64_t> ParseDurationSeconds(const std::string& text) {
  if (text == "0") return int64_t{0};
  auto bad = [&] {
    return InvalidArgumentError(
        "--max-age: expected a duration like 90s, 30m, 72h, 7d or 0, "
        "got \"" +
        text + "\"");
  };
  if (text.empty()) return bad();
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t digits_end = i;
    while (digits_end < text.size() && std::isdigit(static_cast<unsigned char>(text[digits_end]))) {
      ++digits_end;
    }
    if (digits_end == i || digits_end == text.size() || digits_end - i > 9) return bad();
    int64_t n = std::stoll(text.substr(i, digits_end - i));
    int64_t unit = 0;
    switch (text[digits_end]) {
      case 'd':
        unit = 86400;
        break;
      case 'h':
        unit = 3600;
        break;
      case 'm':
        unit = 60;
        break;
      case 's':
        unit = 1;
        break;
      default:
        return bad();
    }
    total += n * unit;
    i = digits_end + 1;
  }
  if (total > int64_t{100} * 365 * 86400) return bad();
  return total;
}

}  // namespace agentckpt
