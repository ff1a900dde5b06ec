#include "redact/redactor.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "common/utf8.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

// "\n" -> newline, "\\" -> backslash.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == 'n' || s[i + 1] == '\\')) {
      out += s[i + 1] == 'n' ? '\n' : '\\';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string> CorpusLines(const std::string& name) {
  const char* src = std::getenv("AGENTCKPT_SOURCE_DIR");
  std::ifstream in(std::string(src != nullptr ? src : ".") + "/tests/redact/corpus/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  return lines;
}

struct SecretCase {
  std::string rule, secret, input, expected;
};

std::vector<SecretCase> SecretCases() {
  std::vector<SecretCase> cases;
  for (const std::string& line : CorpusLines("secrets.txt")) {
    size_t a = line.find(" | ");
    size_t b = line.find(" | ", a + 3);
    EXPECT_NE(b, std::string::npos) << line;
    if (b == std::string::npos) continue;
    SecretCase c;
    c.rule = line.substr(0, a);
    c.secret = Unescape(line.substr(a + 3, b - a - 3));
    std::string context = Unescape(line.substr(b + 3));
    if (context.empty()) context = "{S}";
    size_t s = context.find("{S}");
    EXPECT_NE(s, std::string::npos) << line;
    c.input = context.substr(0, s) + c.secret + context.substr(s + 3);
    c.expected = context.substr(0, s) + Redactor::Marker(c.rule) + context.substr(s + 3);
    cases.push_back(c);
  }
  return cases;
}

TEST(RedactorCorpusTest, EverySecretIsReplacedByItsRuleMarker) {
  std::vector<SecretCase> cases = SecretCases();
  ASSERT_GE(cases.size(), 30u);
  Redactor r;
  std::vector<std::string> rules = Redactor::BuiltinRuleNames();
  for (const SecretCase& c : cases) {
    ASSERT_NE(std::find(rules.begin(), rules.end(), c.rule), rules.end()) << c.rule;
    std::string out = r.Redact(c.input);
    EXPECT_EQ(out.find(c.secret), std::string::npos) << c.input << "\n=> " << out;
    EXPECT_EQ(out, c.expected) << "input: " << c.input;
    EXPECT_EQ(r.Redact(out), out) << "not idempotent: " << c.input;
  }
}

TEST(RedactorCorpusTest, EveryBuiltinRuleHasACorpusCase) {
  std::map<std::string, int> seen;
  for (const SecretCase& c : SecretCases()) ++seen[c.rule];
  for (const std::string& rule : Redactor::BuiltinRuleNames()) EXPECT_GT(seen[rule], 0) << rule;
}

TEST(RedactorCorpusTest, LookalikesStayUnchanged) {
  std::vector<std::string> lines = CorpusLines("lookalikes.txt");
  ASSERT_GE(lines.size(), 30u);
  Redactor r;
  for (const std::string& line : lines) {
    std::string text = Unescape(line);
    EXPECT_EQ(r.Redact(text), text);
  }
}

TEST(RedactorCorpusTest, AllSecretsInOneTextAreRemovedAndCounted) {
  std::mutex mu;
  std::map<std::string, uint64_t> counts;
  Redactor r([&](const std::string& rule, uint64_t n) {
    std::lock_guard<std::mutex> lock(mu);
    counts[rule] += n;
  });
  std::string all;
  std::vector<SecretCase> cases = SecretCases();
  for (const SecretCase& c : cases) all += c.input + "\n";
  std::string out = r.Redact(all);
  for (const SecretCase& c : cases) EXPECT_EQ(out.find(c.secret), std::string::npos) << c.secret;
  uint64_t total = 0;
  for (const auto& [rule, n] : counts) total += n;
  EXPECT_EQ(total, cases.size());
  EXPECT_EQ(r.Redact(out), out);
}

TEST(RedactorTest, UrlKeepsUserAndHost) {
  Redactor r;
  EXPECT_EQ(r.Redact("nats://agent:pa55word@nats.internal:4222"),
            "nats://agent:[REDACTED:url_password]@nats.internal:4222");
}

TEST(RedactorTest, NeverSplitsUtf8AndKeepsNonAsciiAround) {
  Redactor r;
  std::string text =
      "clé=ü token=\xc3\xa9t\xc3\xa9\xe2\x82\xac"
      "2024 fin — sk-ant-" +
      std::string(30, 'a') + "1Ω";
  std::string out = r.Redact(text);
  EXPECT_TRUE(IsValidUtf8(out)) << out;
  EXPECT_EQ(out, "clé=ü token=[REDACTED:token] fin — [REDACTED:anthropic_api_key]Ω");
}

TEST(RedactorTest, ExtraPatternsAreAppliedOnWholeCharacters) {
  Redactor r;
  ASSERT_TRUE(r.AddPatterns("# internal ids\n\ninternal_id=INT-[0-9]{6}\nsplit=\xa9\n").ok());
  EXPECT_EQ(r.Redact("ticket INT-123456 and INT-12"), "ticket [REDACTED:internal_id] and INT-12");
  // A byte-level pattern that would hit the middle of "é" takes the whole character.
  std::string out = r.Redact("caf\xc3\xa9!");
  EXPECT_TRUE(IsValidUtf8(out)) << out;
  EXPECT_EQ(out, "caf[REDACTED:split]!");
  EXPECT_EQ(r.Redact(out), out);
}

TEST(RedactorTest, BadPatternLinesAreConfigErrorsNamingTheLine) {
  Redactor r;
  Status s = r.AddPatterns("ok=abc\n\nbroken=([a-z\n");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("line 3: ", 0), 0u) << s.message();
  EXPECT_EQ(r.Redact("abc"), "abc");  // nothing added
  s = r.AddPatterns("no equals sign");
  EXPECT_EQ(s.message().rfind("line 1: ", 0), 0u) << s.message();
  s = r.AddPatterns("bad name!=x");
  EXPECT_EQ(s.message().rfind("line 1: ", 0), 0u) << s.message();
  EXPECT_EQ(r.AddPatternsFromFile("/nonexistent/patterns").code(), StatusCode::kInvalidArgument);
}

TEST(RedactorTest, PatternsFromFile) {
  testing::TempDir dir;
  std::string path = dir.path() + "/patterns";
  std::ofstream(path) << "employee=EMP[0-9]{4}\n";
  Redactor r;
  ASSERT_TRUE(r.AddPatternsFromFile(path).ok());
  EXPECT_EQ(r.Redact("EMP1234"), "[REDACTED:employee]");
}

TEST(RedactorTest, RedactJsonRedactsStringsNotKeys) {
  Redactor r;
  nlohmann::json j = {{"password", "x"},
                      {"list", {"ghp_16C7e42F292c6912E7710c838347Ae178B4a", 3}},
                      {"nested", {{"url", "https://u:pw1234@h/"}}}};
  r.RedactJson(&j);
  EXPECT_EQ(j["password"], "x");
  EXPECT_EQ(j["list"][0], "[REDACTED:github_token]");
  EXPECT_EQ(j["list"][1], 3);
  EXPECT_EQ(j["nested"]["url"], "https://u:[REDACTED:url_password]@h/");
}

TEST(RedactorTest, IdempotentOnMixedText) {
  Redactor r;
  std::string text =
      "password=[REDACTED:password] then password=abc123 and "
      "https://a:[REDACTED:url_password]@h and Bearer [REDACTED:bearer_token]";
  std::string once = r.Redact(text);
  EXPECT_EQ(once,
            "password=[REDACTED:password] then password=[REDACTED:password] and "
            "https://a:[REDACTED:url_password]@h and Bearer [REDACTED:bearer_token]");
  EXPECT_EQ(r.Redact(once), once);
}

}  // namespace
}  // namespace agentckpt
