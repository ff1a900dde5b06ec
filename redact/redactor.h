// Redactor: removes secrets from text before it is stored, published, logged or put in a prompt.
//
// Built-in rules (docs/security.md lists them): Anthropic, OpenAI, AWS access key ids and secret
// keys, PEM private keys (also the "private_key" of a GCP service-account file), GitHub, Slack
// (tokens, webhooks), Stripe, JWTs, Authorization: Bearer/Basic credentials, passwords in URLs
// and generic secrets in key=value / "key": "value" form. Each secret is replaced by a marker
// naming the rule, e.g. "[REDACTED:github_token]"; the text around it stays (for a URL only the
// password goes, for key=value only the value). Extra rules come from a patterns file: one
// `name=regex` (ECMAScript) per line, blank lines and lines starting with '#' ignored.
//
// Redaction is idempotent (markers are never matched again) and never splits a UTF-8 character.
// Setup (the constructor, AddPatterns*) is not thread-safe; once set up, every const method is.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace agentckpt {

class Redactor {
 public:
  // Told, after each redaction that removed something, how many secrets `rule` removed (e.g. to
  // count them in a metric). Called from the redacting thread; must be thread-safe.
  using Observer = std::function<void(const std::string& rule, uint64_t count)>;

  // A redactor with the built-in rules only.
  explicit Redactor(Observer observer = nullptr);

  // Adds the rules of a patterns file's text. kInvalidArgument whose message starts with
  // "line N: " for a line that is not `name=regex` (name: 1-64 of [A-Za-z0-9_-]) or whose regex
  // does not compile. Nothing is added when any line is bad.
  Status AddPatterns(std::string_view file_text);
  // As AddPatterns, reading `path`; kInvalidArgument also when the file cannot be read.
  Status AddPatternsFromFile(const std::string& path);

  // `text` with every secret replaced by its marker.
  std::string Redact(std::string_view text) const;
  // Redacts `*text` in place; true if anything was replaced.
  bool RedactInPlace(std::string* text) const;
  // Redacts every string value in `*value`, recursively (object keys stay as they are).
  void RedactJson(nlohmann::json* value) const;

  // "[REDACTED:" + rule + "]".
  static std::string Marker(std::string_view rule);
  // The names of the built-in rules.
  static std::vector<std::string> BuiltinRuleNames();

 private:
  struct Pattern {
    std::string name;
    std::regex regex;
  };
  std::string_view RuleName(int rule) const;

  Observer observer_;
  std::vector<Pattern> extra_;
};

}  // namespace agentckpt
