#include "tests/restore/hostile_texts.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/restore/prompt_test_util.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

// splitmix64: the same sequence on every platform (std distributions are not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }
  uint32_t Between(uint32_t lo, uint32_t hi) {
    return lo + static_cast<uint32_t>(Below(hi - lo + 1));
  }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }

 private:
  uint64_t state_;
};

std::string Cp(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// `n` code points drawn from the ranges (inclusive; all assigned since Unicode 13 or earlier).
std::string FromRanges(Rng& r, const std::vector<std::pair<uint32_t, uint32_t>>& ranges, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    const auto& [lo, hi] = r.Pick(ranges);
    out += Cp(r.Between(lo, hi));
  }
  return out;
}

using Fragment = std::function<std::string(Rng&)>;

const std::vector<std::string> kEnglish = {
    "the",     "deploy", "window",     "Reviewer", "asked", "shorter", "it's",     "WE'LL",
    "they'VE", "NATS",   "checkpoint", "I'm",      "don't", "Q3",      "dashboard"};

std::string Cjk(Rng& r) {
  static const std::vector<std::string> kWords = {
      "注意", "数据", "需要", "重新", "核对",       "。",     "、",     "「",  "」",
      "（",   "）",   "東京", "です", "ありがとう", "한국어", "데이터", "확인"};
  std::string s =
      FromRanges(r, {{0x4E00, 0x9FA5}, {0x3041, 0x3096}, {0x30A1, 0x30FA}, {0xAC00, 0xD7A3}},
                 r.Between(1, 12));
  s += r.Pick(kWords);
  if (r.Below(4) == 0) s += r.Below(2) ? " " : "\n";
  if (r.Below(8) == 0) s += std::to_string(r.Below(100000));
  return s;
}

std::string RareCjk(Rng& r) {
  std::string s = FromRanges(r,
                             {{0x3400, 0x4DB5},
                              {0x20000, 0x2A6D6},
                              {0x2A700, 0x2B734},
                              {0x2B740, 0x2B81D},
                              {0x2B820, 0x2CEA1},
                              {0x2CEB0, 0x2EBE0},
                              {0x30000, 0x3134A},
                              {0xF900, 0xFA6D}},
                             r.Between(1, 10));
  if (r.Below(3) == 0) s += FromRanges(r, {{0x4E00, 0x9FA5}}, r.Between(1, 4));
  if (r.Below(3) == 0) s += r.Below(2) ? " " : "，";
  return s;
}

std::string Emoji(Rng& r) {
  static const std::vector<std::string> kEmoji = {"👨‍👩‍👧‍👦",
                                                  "🧑‍💻",
                                                  "🏳️‍🌈",
                                                  "👩🏾‍🚀",
                                                  "👍🏽",
                                                  "🇯🇵",
                                                  "🇺🇸",
                                                  "1️⃣",
                                                  "❤️",
                                                  "🫠",
                                                  "🚀",
                                                  "✅",
                                                  "😀",
                                                  "🤦‍♂️",
                                                  "🧔🏻‍♀️",
                                                  "🐈‍⬛",
                                                  "👁️‍🗨️",
                                                  "#️⃣",
                                                  "🏴‍☠️",
                                                  "🫶🏿",
                                                  "🥲"};
  std::string s;
  for (size_t n = r.Between(1, 5); n > 0; --n) s += r.Pick(kEmoji);
  if (r.Below(2) == 0) s += " " + r.Pick(kEnglish) + " ";
  return s;
}

std::string Thai(Rng& r) {
  static const std::vector<std::string> kWords = {"ภาษาไทย", "สวัสดีครับ", "ข้อมูล", "กรุณา", "ตรวจสอบ",
                                                  "ที่",       "และ",     "ๆ",    "฿"};
  std::string s = r.Below(2) ? r.Pick(kWords)
                             : FromRanges(r, {{0x0E01, 0x0E3A}, {0x0E3F, 0x0E5B}}, r.Between(1, 8));
  if (r.Below(4) == 0) s += " ";
  return s;
}

std::string Math(Rng& r) {
  static const std::vector<std::string> kSymbols = {
      "∀",   "∃", "∂", "∇", "∑", "∏", "∫", "∮", "≤", "≥", "≠", "≈", "∞",  "√",  "∝",
      "∈",   "∉", "⊂", "⊆", "∪", "∩", "⟨", "⟩", "α", "β", "λ", "Ω", "x²", "yⁿ", "\\frac{a}{b}",
      " = ", "⇒", "ℝ"};
  std::string s = r.Pick(kSymbols);
  if (r.Below(3) == 0)
    s += FromRanges(r, {{0x1D400, 0x1D454}, {0x1D7CE, 0x1D7FF}}, r.Between(1, 4));
  if (r.Below(4) == 0) s += std::to_string(r.Below(1000));
  if (r.Below(4) == 0) s += " ";
  return s;
}

std::string Base64(Rng& r) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string s = r.Below(6) == 0 ? "data:image/png;base64," : "";
  for (size_t n = r.Between(4, 120); n > 0; --n) s += kAlphabet[r.Below(64)];
  if (r.Below(3) == 0) s += r.Below(2) ? "==" : "=";
  if (r.Below(3) == 0) s += "\n";
  return s;
}

std::string Code(Rng& r) {
  static const std::vector<std::string> kTokens = {"if",
                                                   "(",
                                                   ")",
                                                   "{",
                                                   "}",
                                                   "return",
                                                   "const",
                                                   "auto&",
                                                   "=>",
                                                   "!==",
                                                   "::",
                                                   "->",
                                                   "std::vector",
                                                   "snake_case_name",
                                                   "camelCaseName",
                                                   "HTTPServer",
                                                   "0x1F",
                                                   "3.14e-10",
                                                   "\"str\\n\"",
                                                   "//",
                                                   "/* c */",
                                                   "#include",
                                                   "<stdio.h>",
                                                   "i++",
                                                   "&&",
                                                   "||",
                                                   ";",
                                                   ",",
                                                   "[0]",
                                                   "__init__",
                                                   "self.",
                                                   "fn",
                                                   "let mut",
                                                   "SELECT *",
                                                   "FROM t",
                                                   "WHERE",
                                                   "x := 1",
                                                   "$HOME",
                                                   "'a'",
                                                   "`tpl ${x}`"};
  static const std::vector<std::string> kSpace = {" ",      "",       "\n", "\n    ",
                                                  "\n\t\t", "\r\n  ", "  ", "\n\n"};
  return r.Pick(kTokens) + r.Pick(kSpace);
}

std::string Mixed(Rng& r) {
  static const std::vector<std::string> kWords = {"Привет",
                                                  "мир",
                                                  "Ελληνικά",
                                                  "λέξη",
                                                  "مرحبا",
                                                  "بالعالم",
                                                  "שלום",
                                                  "עולם",
                                                  "नमस्ते",
                                                  "दुनिया",
                                                  "日本語",
                                                  "中文",
                                                  "한국어",
                                                  "Ünïcödé",
                                                  "naïve",
                                                  "façade",
                                                  "https://example.com/a/b?c=1",
                                                  "1234567",
                                                  "/usr/local/bin",
                                                  "e.g.",
                                                  "—",
                                                  "…",
                                                  "¿Qué?",
                                                  "¡Sí!",
                                                  "Straße",
                                                  "İstanbul"};
  std::string s = r.Below(3) == 0 ? r.Pick(kEnglish) : r.Pick(kWords);
  static const std::vector<std::string> kSep = {" ", ", ", ". ", "\n", "/", "-", "", ": "};
  return s + r.Pick(kSep);
}

std::string Nfkc(Rng& r) {
  static const std::vector<std::string> kExpanding = {
      "ﬁ", "ﬂ", "ﬃ",  "ﬄ",  "ﬅ",      "ﬆ",  "㍿", "㍻", "㌀", "㎏", "㎞", "㏄", "①", "⑳",
      "⑴", "⒜", "Ａ", "ｂ", "１２３", "！", "？", "½",  "⅞",  "Ⅻ",  "ⅻ",  "²",  "ⁿ", "ﷺ",
      "ﷻ", "℡", "™",  "℃",  "ｶﾀｶﾅ",   "﹏", "ǆ",  "ŉ",  "ﾟ",  "㈱", "㊙", "🄰",  "🅰"};
  std::string s;
  for (size_t n = r.Between(1, 6); n > 0; --n) s += r.Pick(kExpanding);
  if (r.Below(3) == 0) s += " " + r.Pick(kEnglish);
  return s;
}

std::string Whitespace(Rng& r) {
  static const std::vector<std::string> kSpaces = {
      " ",        "   ",          "\t",           "\n",           "\r\n",     "\n\n\n",
      "\xC2\xA0", "\xE3\x80\x80", "\xE2\x80\xA8", "\xEF\xBB\xBF", "\xC2\x85", "\xE2\x80\x8B",
      "\v",       "\f",           "\n/",          " \n ",         "\t\n"};
  std::string s = r.Pick(kSpaces);
  if (r.Below(2) == 0) s += r.Pick(kEnglish);
  if (r.Below(4) == 0) s += "/";
  return s;
}

// Pieces longer than the counter's short-merge limit (128 bytes) take its heap-based merge; they
// stay short of 200 bytes because js-tiktoken's merge is cubic in a piece's length.
std::string LongRun(Rng& r) {
  std::string s;
  switch (r.Below(5)) {
    case 0:
      s.assign(r.Between(140, 200), "aXz!"[r.Below(4)]);
      break;
    case 1:
      for (size_t n = r.Between(140, 200); n > 0; --n) s += static_cast<char>('a' + r.Below(26));
      break;
    case 2:
      for (size_t n = r.Between(10, 100); n > 0; --n) s += "ab";
      break;
    case 3:
      s.assign(r.Between(10, 400), '1');
      break;
    default:
      for (size_t n = r.Between(10, 66); n > 0; --n) s += "ー";
  }
  return s + (r.Below(2) ? " " : "\n");  // so that two runs do not make one longer piece
}

std::string Special(Rng& r) {
  static const std::vector<std::string> kSpecial = {"<|endoftext|>", "<|fim_prefix|>",
                                                    "<|endofprompt|>", "<|im_start|>", "<|"};
  return r.Pick(kSpecial) + (r.Below(2) ? " " + r.Pick(kEnglish) : "");
}

const std::map<std::string, Fragment>& Generators() {
  static const std::map<std::string, Fragment> kGenerators = {
      {"cjk", Cjk},   {"rare_cjk", RareCjk},      {"emoji", Emoji},       {"thai", Thai},
      {"math", Math}, {"base64", Base64},         {"code", Code},         {"mixed", Mixed},
      {"nfkc", Nfkc}, {"whitespace", Whitespace}, {"long_runs", LongRun}, {"special", Special}};
  return kGenerators;
}

}  // namespace

const std::vector<std::string>& HostileScripts() {
  static const std::vector<std::string> kScripts = [] {
    std::vector<std::string> out;
    for (const auto& [name, gen] : Generators()) out.push_back(name);
    return out;
  }();
  return kScripts;
}

std::string HostileText(const std::string& script, uint64_t seed, size_t bytes) {
  const Fragment& gen = Generators().at(script);
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the script's name
  for (char c : script) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  Rng r(seed ^ h);
  std::string out;
  while (out.size() < bytes) out += gen(r);
  return out;
}

void MakeHostilePromptInputs(const std::string& script, Checkpoint* cp, ReplayResult* replay) {
  ContextSummary& c = cp->context_summary;
  c.draft_content = HostileText(script, 1, c.draft_content.size());
  c.gathering_results = HostileText(script, 2, c.gathering_results.size());
  *replay = MakeReplay(50, 30, 16);
  for (size_t i = 0; i < replay->messages.size(); ++i) {
    replay->messages[i].data = HostileText(script, 100 + i, 2048);
    replay->messages[i].original_size = replay->messages[i].data.size();
  }
}

std::vector<size_t> ReferenceCounts(const std::vector<std::string>& texts, TokenEncoding encoding) {
  TempDir dir;
  {
    std::ofstream in(dir.File("in.json"), std::ios::binary);
    in << nlohmann::json(texts).dump();
  }
  std::string cmd = std::string("cd '") + AGENTCKPT_TIKTOKEN_DIR + "' && '" + AGENTCKPT_NODE +
                    "' count_tokens.mjs " + std::string(TokenEncodingName(encoding)) + " '" +
                    dir.File("in.json") + "' '" + dir.File("out.json") + "'";
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << "the reference counter failed: " << cmd;
    return {};
  }
  std::ifstream out(dir.File("out.json"), std::ios::binary);
  std::stringstream buf;
  buf << out.rdbuf();
  std::vector<size_t> counts = nlohmann::json::parse(buf.str()).get<std::vector<size_t>>();
  EXPECT_EQ(counts.size(), texts.size());
  return counts;
}

}  // namespace agentckpt::testing
