#include "redact/builtin_rules.h"

#include <algorithm>
#include <array>
#include <string>

namespace agentckpt::redact_internal {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsAlpha(char c) { return IsUpper(c) || IsLower(c); }
bool IsAlnum(char c) { return IsAlpha(c) || IsDigit(c); }
bool IsUpperAlnum(char c) { return IsUpper(c) || IsDigit(c); }
bool IsB64Url(char c) { return IsAlnum(c) || c == '_' || c == '-'; }
bool IsAlnumUnderscore(char c) { return IsAlnum(c) || c == '_'; }
bool IsAlnumDash(char c) { return IsAlnum(c) || c == '-'; }
bool IsIdent(char c) { return IsAlnum(c) || c == '_' || c == '-' || c == '.'; }
bool IsTokenChar(char c) {  // RFC 6750 b64token plus '.' and '~'
  return IsAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
         c == '=';
}
bool IsPemBody(char c) {
  return IsAlnum(c) || c == '+' || c == '/' || c == '=' || c == '\n' || c == '\r' || c == '\\';
}

template <typename Pred>
size_t RunEnd(std::string_view s, size_t pos, Pred pred) {
  while (pos < s.size() && pred(s[pos])) ++pos;
  return pos;
}

template <typename Pred>
bool LeftBoundary(std::string_view s, size_t pos, Pred part_of_word) {
  return pos == 0 || !part_of_word(s[pos - 1]);
}

// Calls fn(pos) for every occurrence of `needle` in `hay`.
template <typename Fn>
void ForEach(std::string_view hay, std::string_view needle, Fn fn) {
  for (size_t pos = hay.find(needle); pos != std::string_view::npos;
       pos = hay.find(needle, pos + 1)) {
    fn(pos);
  }
}

bool HasDigitAndLetter(std::string_view s) {
  bool digit = false, letter = false;
  for (char c : s) {
    digit = digit || IsDigit(c);
    letter = letter || IsAlpha(c);
  }
  return digit && letter;
}

// sk-ant-... (Anthropic) and sk-... / sk-proj-... (OpenAI).
void ScanSkKeys(std::string_view t, std::vector<Span>* out) {
  ForEach(t, "sk-", [&](size_t pos) {
    if (!LeftBoundary(t, pos, IsB64Url)) return;
    if (t.substr(pos + 3, 4) == "ant-") {
      size_t end = RunEnd(t, pos + 7, IsB64Url);
      if (end - (pos + 7) >= 20) out->push_back({pos, end, kAnthropicApiKey});
      return;
    }
    size_t end = RunEnd(t, pos + 3, IsB64Url);
    std::string_view body = t.substr(pos + 3, end - (pos + 3));
    if (body.size() >= 20 && HasDigitAndLetter(body)) out->push_back({pos, end, kOpenAiApiKey});
  });
}

void ScanAwsKeyIds(std::string_view t, std::vector<Span>* out) {
  for (std::string_view prefix : {"AKIA", "ASIA"}) {
    ForEach(t, prefix, [&](size_t pos) {
      if (!LeftBoundary(t, pos, IsAlnum)) return;
      size_t end = RunEnd(t, pos + 4, IsUpperAlnum);
      if (end - pos != 20 || (end < t.size() && IsAlnum(t[end]))) return;
      out->push_back({pos, end, kAwsAccessKeyId});
    });
  }
}

void ScanGithub(std::string_view t, std::vector<Span>* out) {
  for (std::string_view prefix : {"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}) {
    ForEach(t, prefix, [&](size_t pos) {
      if (!LeftBoundary(t, pos, IsB64Url)) return;
      size_t end = RunEnd(t, pos + 4, IsAlnum);
      if (end - (pos + 4) >= 30) out->push_back({pos, end, kGithubToken});
    });
  }
  ForEach(t, "github_pat_", [&](size_t pos) {
    if (!LeftBoundary(t, pos, IsB64Url)) return;
    size_t end = RunEnd(t, pos + 11, IsAlnumUnderscore);
    if (end - (pos + 11) >= 22) out->push_back({pos, end, kGithubToken});
  });
}

void ScanSlack(std::string_view t, std::vector<Span>* out) {
  ForEach(t, "xox", [&](size_t pos) {
    if (!LeftBoundary(t, pos, IsB64Url) || pos + 5 > t.size()) return;
    char kind = t[pos + 3];
    if (t[pos + 4] != '-' || std::string_view("bpars").find(kind) == std::string_view::npos) {
      return;
    }
    size_t end = RunEnd(t, pos + 5, IsAlnumDash);
    std::string_view body = t.substr(pos + 5, end - (pos + 5));
    if (body.size() >= 10 && HasDigitAndLetter(body)) out->push_back({pos, end, kSlackToken});
  });
  static constexpr std::string_view kHook = "hooks.slack.com/services/";
  ForEach(t, kHook, [&](size_t pos) {
    size_t begin = pos + kHook.size();
    size_t end = RunEnd(t, begin, [](char c) { return IsAlnum(c) || c == '/' || c == '_'; });
    if (end - begin >= 10) out->push_back({begin, end, kSlackWebhook});
  });
}

void ScanStripe(std::string_view t, std::vector<Span>* out) {
  for (std::string_view prefix : {"sk_live_", "rk_live_", "sk_test_", "rk_test_"}) {
    ForEach(t, prefix, [&](size_t pos) {
      if (!LeftBoundary(t, pos, IsB64Url)) return;
      size_t end = RunEnd(t, pos + 8, IsAlnum);
      if (end - (pos + 8) >= 16) out->push_back({pos, end, kStripeKey});
    });
  }
}

void ScanJwt(std::string_view t, std::vector<Span>* out) {
  ForEach(t, "eyJ", [&](size_t pos) {
    if (!LeftBoundary(t, pos, [](char c) { return IsB64Url(c) || c == '.'; })) return;
    size_t p = pos;
    for (int part = 0; part < 3; ++part) {
      size_t end = RunEnd(t, p, IsB64Url);
      if (end - p < 10) return;
      p = end;
      if (part < 2) {
        if (p >= t.size() || t[p] != '.') return;
        ++p;
      }
    }
    out->push_back({pos, p, kJwt});
  });
}

// -----BEGIN ... PRIVATE KEY----- through its END line (even with Proc-Type headers in between);
// without an END line (a cut text), up to the end of the key material.
constexpr size_t kPemMaxBytes = 16384;
void ScanPem(std::string_view t, std::vector<Span>* out) {
  ForEach(t, "-----BEGIN ", [&](size_t pos) {
    size_t label = pos + 11;
    size_t close = t.find("-----", label);
    if (close == std::string_view::npos || close - label > 40) return;
    std::string_view name = t.substr(label, close - label);
    static constexpr std::string_view kSuffix = "PRIVATE KEY";
    if (name.size() < kSuffix.size() || name.substr(name.size() - kSuffix.size()) != kSuffix) {
      return;
    }
    size_t body = close + 5;
    size_t end = RunEnd(t, body, IsPemBody);
    size_t end_line = t.find("-----END ", body);
    if (end_line != std::string_view::npos && end_line - body <= kPemMaxBytes) {
      size_t end_close = t.find("-----", end_line + 9);
      if (end_close != std::string_view::npos && end_close - end_line < 60) end = end_close + 5;
    }
    out->push_back({pos, end, kPrivateKey});
  });
}

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

struct KeyWord {
  std::string_view word;  // lower case
  int rule;
};

constexpr std::array<KeyWord, 20> kKeyWords = {{
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

// KEY=value, KEY: value, "KEY": "value", KEY='value' where the key name ends in a key word
// (password, secret, token, api_key, ...; any case, any prefix such as DB_ or client_).
void ScanKeyValues(std::string_view t, std::string_view lower, std::vector<Span>* out) {
  for (const KeyWordHit& hit : KeyValueCandidates(lower)) {
    const KeyWord& kw = kKeyWords[hit.word];
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

}  // namespace

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

std::string_view BuiltinRuleName(int rule) {
  static constexpr std::array<std::string_view, kBuiltinRuleCount> kNames = {"anthropic_api_key",
                                                                             "openai_api_key",
                                                                             "aws_access_key_id",
                                                                             "aws_secret_key",
                                                                             "private_key",
                                                                             "github_token",
                                                                             "slack_token",
                                                                             "slack_webhook",
                                                                             "stripe_key",
                                                                             "jwt",
                                                                             "bearer_token",
                                                                             "basic_auth",
                                                                             "url_password",
                                                                             "client_secret",
                                                                             "password",
                                                                             "secret",
                                                                             "api_key",
                                                                             "access_key",
                                                                             "token"};
  return kNames[static_cast<size_t>(rule)];
}

void ScanBuiltin(std::string_view text, std::string_view lower, std::vector<Span>* out) {
  ScanSkKeys(text, out);
  ScanAwsKeyIds(text, out);
  ScanGithub(text, out);
  ScanSlack(text, out);
  ScanStripe(text, out);
  ScanJwt(text, out);
  ScanPem(text, out);
  ScanAuthorization(text, lower, out);
  ScanUrlPasswords(text, out);
  ScanKeyValues(text, lower, out);
}

}  // namespace agentckpt::redact_internal
