#include "redact/builtin_rules.h"

#include <array>
#include <string>

#include "redact/scan_text.h"

namespace agentckpt::redact_internal {
namespace {

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

}  // namespace

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
