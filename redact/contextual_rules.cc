// The contextual rules: secrets recognised by the syntax around them (an Authorization header,
// a URL's user:password@, KEY=value) rather than by a prefix of their own.
#include <algorithm>
#include <array>
#include <string>

#include "redact/builtin_rules.h"
#include "redact/scan_text.h"

namespace agentckpt::redact_internal {
namespace {

struct KeyWordRule {
  std::string_view word;  // lower case
  int rule;
};

constexpr std::array<KeyWordRule, 20> kKeyWords = {{
    {"aws_secret_access_key", kAwsSecretKey},
    {"secret_access_key", kAwsSecretKey},
    {"secretaccesskey", kAwsSecretKey},
    {"aws_secret_key", kAwsSecretKey},
    {"client_secret", kClientSecret},
    {"clientsecret", kClientSecret},
    {"private_key", kPrivateKey},
    {"privatekey", kPrivateKey},
    {"password", kPassword},
    {"passwd", kPassword},
    {"passphrase", kPassword},
    {"secret_key", kSecret},
    {"secretkey", kSecret},
    {"secret", kSecret},
    {"api_key", kApiKey},
    {"apikey", kApiKey},
    {"api-key", kApiKey},
    {"access_key", kAccessKey},
    {"accesskey", kAccessKey},
    {"token", kToken},
}};

// `prose_separator`: the key was followed by ':' and the value is unquoted and followed by more
// words on its line, as in "token: expected a string".
bool IsPlaceholder(std::string_view v, std::string_view lower_v, bool prose_separator) {
  if (v.size() < 3) return true;
  char first = v[0];
  if (first == '$' || first == '{' || first == '<' || first == '%' || first == '[' ||
      first == '(') {
    return true;
  }
  bool digits = true, stars = true, lower_letters = true;
  for (char c : v) {
    digits = digits && IsDigit(c);
    stars = stars && (c == '*' || c == 'x' || c == 'X' || c == '.');
    lower_letters = lower_letters && (IsLower(c) || c == '-' || c == '_');
  }
  if (digits || stars) return true;
  // "password: required", "token: expected a string": prose, not a value.
  if (prose_separator && lower_letters) return true;
  for (std::string_view word : {"true", "false", "null", "none", "nil", "undefined", "redacted",
                                "changeme", "string", "required", "optional"}) {
    if (lower_v == word) return true;
  }
  return false;
}

}  // namespace

// "Authorization: Bearer X" / "Basic X" / "Token X" (any case, also as a JSON member or a
// key=value), keeping the header name and the scheme; and a bare "Bearer <long token>".
void ScanAuthorization(std::string_view t, std::string_view lower, std::vector<Span>* out) {
  ForEach(lower, "authorization", [&](size_t pos) {
    size_t p = pos + 13;
    bool separator = false;
    for (int i = 0; i < 6 && p < t.size(); ++i, ++p) {
      char c = t[p];
      if (c == ':' || c == '=') {
        separator = true;
      } else if (c != '"' && c != '\'' && c != ' ' && c != '\t' && c != '\\') {
        break;
      }
    }
    if (!separator) return;
    int rule = -1;
    for (auto [scheme, r] : {std::pair<std::string_view, int>{"bearer ", kBearerToken},
                             {"token ", kBearerToken},
                             {"basic ", kBasicAuth}}) {
      if (lower.substr(p, scheme.size()) == scheme) {
        rule = r;
        p += scheme.size();
        break;
      }
    }
    if (rule < 0) return;
    p = RunEnd(t, p, [](char c) { return c == ' '; });
    size_t end = RunEnd(t, p, IsTokenChar);
    if (end - p >= 4) out->push_back({p, end, rule});
  });
  ForEach(t, "Bearer ", [&](size_t pos) {
    if (!LeftBoundary(t, pos, IsAlnum)) return;
    size_t p = pos + 7;
    size_t end = RunEnd(t, p, IsTokenChar);
    std::string_view token = t.substr(p, end - p);
    if (token.size() >= 16 && HasDigitAndLetter(token)) out->push_back({p, end, kBearerToken});
  });
}

// scheme://user:password@host: the password only.
void ScanUrlPasswords(std::string_view t, std::vector<Span>* out) {
  ForEach(t, "://", [&](size_t pos) {
    if (pos == 0 || !IsAlnum(t[pos - 1])) return;
    size_t authority = pos + 3;
    size_t stop = RunEnd(t, authority, [](char c) {
      return c != '/' && c != '?' && c != '#' && c != ' ' && c != '\t' && c != '\n' && c != '\r' &&
             c != '"' && c != '\'' && c != '<' && c != '>' && c != '\\' && c != '`';
    });
    std::string_view auth = t.substr(authority, stop - authority);
    size_t at = auth.rfind('@');
    if (at == std::string_view::npos) return;
    size_t colon = auth.find(':');
    if (colon == std::string_view::npos || colon > at || at == colon + 1) return;
    out->push_back({authority + colon + 1, authority + at, kUrlPassword});
  });
}

// KEY=value, KEY: value, "KEY": "value", KEY='value' where the key name ends in a key word
// (password, secret, token, api_key, ...; any case, any prefix such as DB_ or client_).
void ScanKeyValues(std::string_view t, std::string_view lower, std::vector<Span>* out) {
  for (const KeyWordHit& hit : KeyValueCandidates(lower)) {
    const KeyWordRule& kw = kKeyWords[hit.word];
    [&](size_t pos) {
      size_t p = pos + kw.word.size();
      if (p < t.size() && IsIdent(t[p])) return;  // the key word does not end the name
      if (p < t.size() && t[p] == '\\' && p + 1 < t.size() && t[p + 1] == '"') ++p;
      if (p < t.size() && (t[p] == '"' || t[p] == '\'')) ++p;
      if (p < t.size() && t[p] == ']') ++p;  // config['SECRET_KEY'] = ...
      p = RunEnd(t, p, [](char c) { return c == ' ' || c == '\t'; });
      if (p >= t.size()) return;
      bool prose = false;
      if (t[p] == ':') {
        prose = true;
        ++p;
        if (p < t.size() && t[p] == '=') ++p;
      } else if (t[p] == '=') {
        ++p;
        if (p < t.size() && t[p] == '=') return;  // a comparison
        if (p < t.size() && t[p] == '>') ++p;
      } else {
        return;
      }
      p = RunEnd(t, p, [](char c) { return c == ' ' || c == '\t'; });
      if (p >= t.size()) return;
      size_t begin = p, end = p;
      if (t[p] == '\\' && p + 1 < t.size() && t[p + 1] == '"') {  // JSON inside a string
        begin = p + 2;
        end = t.find("\\\"", begin);
        if (end == std::string_view::npos) end = RunEnd(t, begin, [](char c) { return c != '\n'; });
        prose = false;
      } else if (t[p] == '"' || t[p] == '\'') {
        char quote = t[p];
        begin = end = p + 1;
        while (end < t.size() && t[end] != quote && t[end] != '\n') {
          end += (t[end] == '\\' && quote == '"' && end + 1 < t.size()) ? 2 : 1;
        }
        end = std::min(end, t.size());
        prose = false;
      } else {
        end = RunEnd(t, p, [](char c) {
          return static_cast<unsigned char>(c) > ' ' && c != ',' && c != ';' && c != '&' &&
                 c != '"' && c != '\'' && c != '<' && c != '>' && c != ')' && c != '}' &&
                 c != ']' && c != '\\' && c != '`';
        });
        prose = prose && end + 1 < t.size() && t[end] == ' ' && IsAlpha(t[end + 1]);
      }
      std::string_view value = t.substr(begin, end - begin);
      if (IsPlaceholder(value, lower.substr(begin, end - begin), prose)) return;
      out->push_back({begin, end, kw.rule});
    }(hit.pos);
  }
}

// Searching the text once per key word (20 passes, and prose is full of their first letters) cost
// most of a scan; a key-value match needs ':' or '=' right after the key word (past an optional
// \", quote, ']' and blanks), so walk back from each separator instead and compare the key
// words that end there. Same hits as the 20 searches, in the same order.
std::vector<KeyWordHit> KeyValueCandidates(std::string_view lower) {
  std::vector<KeyWordHit> hits;
  for (size_t q = 0; q < lower.size(); ++q) {
    if (lower[q] != ':' && lower[q] != '=') continue;
    size_t e = q;  // walk back: blanks, then ']', then a quote (with its backslash)
    while (e > 0 && (lower[e - 1] == ' ' || lower[e - 1] == '\t')) --e;
    if (e > 0 && lower[e - 1] == ']') --e;
    if (e > 0 && (lower[e - 1] == '"' || lower[e - 1] == '\'')) {
      --e;
      if (lower[e] == '"' && e > 0 && lower[e - 1] == '\\') --e;
    }
    for (size_t w = 0; w < kKeyWords.size(); ++w) {
      std::string_view word = kKeyWords[w].word;
      if (e >= word.size() && lower.substr(e - word.size(), word.size()) == word) {
        hits.push_back({w, e - word.size()});
      }
    }
  }
  std::stable_sort(hits.begin(), hits.end(),
                   [](const KeyWordHit& a, const KeyWordHit& b) { return a.word < b.word; });
  return hits;
}

size_t KeyWordCount() { return kKeyWords.size(); }
std::string_view KeyWord(size_t word) { return kKeyWords[word].word; }

}  // namespace agentckpt::redact_internal
