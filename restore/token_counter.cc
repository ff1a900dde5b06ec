#include "restore/token_counter.h"

#include <algorithm>
#include <cstdint>

namespace agentckpt {
namespace {

// Costs are in thousandths of a token so that the sum stays exact and deterministic.
constexpr int64_t kToken = 1000;

// Final safety margin: total * (1000 + kMarginPermille) / 1000, plus kMarginTokens.
constexpr int64_t kMarginPermille = 80;
constexpr int64_t kMarginTokens = 2;

bool IsLower(unsigned char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
bool IsLetter(unsigned char c) { return IsLower(c) || IsUpper(c); }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(unsigned char c) { return IsLetter(c) || IsDigit(c); }
bool IsSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
bool IsPunct(unsigned char c) { return c > 0x20 && c < 0x7f && !IsAlnum(c); }
bool IsVowel(unsigned char c) {
  switch (c | 0x20) {
    case 'a':
    case 'e':
    case 'i':
    case 'o':
    case 'u':
    case 'y':
      return true;
    default:
      return false;
  }
}

// One word segment of a single case shape ("word", "Word" or "WORD").
int64_t SegmentCost(std::string_view seg) {
  const int64_t len = static_cast<int64_t>(seg.size());
  if (len <= 2) return kToken;
  bool all_upper = std::all_of(seg.begin(), seg.end(), [](char c) { return IsUpper(c); });
  if (all_upper) return std::max(kToken, len * 650);  // acronyms, random capitals
  int64_t vowels = std::count_if(seg.begin(), seg.end(), [](char c) { return IsVowel(c); });
  if (len >= 4 && vowels * 4 < len) return std::max(kToken, len * 600);  // vowel-poor: not a word
  // English words up to about 12 letters are one or two tokens; beyond that, few are words.
  int64_t cost = kToken + std::max<int64_t>(0, std::min<int64_t>(len, 12) - 6) * 150;
  if (len > 12) cost += (std::min<int64_t>(len, 16) - 12) * 400;
  if (len > 16) cost += (len - 16) * 600;
  return cost;
}

// A run of ASCII letters: split at case changes (camelCase, HTTPServer), each part a segment.
int64_t LetterRunCost(std::string_view run) {
  int64_t cost = 0;
  size_t start = 0;
  for (size_t i = 1; i <= run.size(); ++i) {
    bool cut = i == run.size();
    if (!cut) {
      unsigned char prev = run[i - 1], cur = run[i];
      bool next_lower = i + 1 < run.size() && IsLower(run[i + 1]);
      cut = (IsLower(prev) && IsUpper(cur)) ||
            (IsUpper(prev) && IsUpper(cur) && next_lower && i - start >= 2);
    }
    if (cut) {
      cost += SegmentCost(run.substr(start, i - start));
      start = i;
    }
  }
  return cost;
}

// A maximal run of ASCII letters and digits.
int64_t AlnumRunCost(std::string_view run) {
  const int64_t len = static_cast<int64_t>(run.size());
  bool has_digit = std::any_of(run.begin(), run.end(), [](char c) { return IsDigit(c); });
  bool has_letter = std::any_of(run.begin(), run.end(), [](char c) { return IsLetter(c); });
  if (has_digit && has_letter) return std::max(kToken, len * 800);  // hex, base64, ids
  if (has_digit) return len <= 2 ? kToken : len * 500;
  return LetterRunCost(run);
}

// A maximal run of ASCII whitespace.
int64_t WhitespaceCost(std::string_view run) {
  int64_t newlines = 0, horizontal = 0;
  for (unsigned char c : run) {
    if (c == '\n' || c == '\r') {
      ++newlines;
    } else {
      ++horizontal;
    }
  }
  if (newlines == 0) {
    if (run == " ") return 0;  // joins the following word
    return kToken + horizontal * 125;
  }
  int64_t cost = kToken + (newlines - 1) * 500;
  if (horizontal > 0) cost += kToken + horizontal * 125;
  return cost;
}

int64_t PunctRunCost(std::string_view run) {
  return kToken + static_cast<int64_t>(run.size() - 1) * 700;
}

// Cost of one non-ASCII code point, by block.
int64_t CodePointCost(uint32_t cp) {
  if (cp < 0x0250) return 1100;                  // Latin-1 supplement, Latin extended
  if (cp >= 0x0300 && cp < 0x0370) return 1200;  // combining marks
  if (cp >= 0x0370 && cp < 0x0530) return 1100;  // Greek, Cyrillic
  if (cp >= 0x0590 && cp < 0x0600) return 1600;  // Hebrew
  if (cp >= 0x0600 && cp < 0x0700) return 1200;  // Arabic
  if (cp < 0x0800) return 1500;                  // other two-byte scripts
  if (cp >= 0x0900 && cp < 0x0E00) return 1800;  // Indic scripts
  if (cp >= 0x0E00 && cp < 0x0E80) return 2100;  // Thai
  if (cp >= 0x1E00 && cp < 0x1F00) return 1500;  // Latin extended additional (Vietnamese)
  if (cp >= 0x2000 && cp < 0x2070) return 1500;  // general punctuation, ZWJ
  if ((cp >= 0x3000 && cp < 0x3100) ||           // CJK punctuation, kana
      (cp >= 0x3400 && cp < 0x4DC0) ||           // CJK extension A
      (cp >= 0x4E00 && cp < 0xA000) ||           // CJK unified ideographs
      (cp >= 0xFF00 && cp < 0xFFF0)) {           // full-width forms
    return 1500;
  }
  if (cp >= 0xAC00 && cp < 0xD7B0) return 2000;  // Hangul syllables
  if (cp == 0xFFFD) return 1000;
  if (cp < 0x10000) return 2500;  // other three-byte characters
  return 3500;                    // emoji and other supplementary planes
}

// Decodes one UTF-8 sequence at s[i]. Returns its length, or 0 if it is ill-formed.
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  unsigned char c = s[i];
  size_t len;
  uint32_t min;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2, min = 0x80, *cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, min = 0x800, *cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, min = 0x10000, *cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    unsigned char cc = s[i + k];
    if ((cc & 0xC0) != 0x80) return 0;
    *cp = (*cp << 6) | (cc & 0x3F);
  }
  if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return 0;
  return len;
}

// "'s", "'t", "'re", "'ve", "'m", "'ll", "'d" after a letter: one token with the apostrophe.
size_t ContractionLength(std::string_view s, size_t i) {
  if (i == 0 || s[i] != '\'' || !IsLetter(s[i - 1])) return 0;
  for (std::string_view suffix : {"s", "t", "re", "ve", "m", "ll", "d"}) {
    size_t end = i + 1 + suffix.size();
    if (s.substr(i + 1, suffix.size()) == suffix && (end == s.size() || !IsAlnum(s[end]))) {
      return 1 + suffix.size();
    }
  }
  return 0;
}

template <typename Pred>
size_t RunEnd(std::string_view s, size_t i, Pred pred) {
  while (i < s.size() && pred(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

}  // namespace

size_t CountTokens(std::string_view text) {
  if (text.empty()) return 0;
  int64_t milli = 0;
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = text[i];
    if (c >= 0x80) {
      uint32_t cp = 0;
      size_t len = DecodeUtf8(text, i, &cp);
      milli += len == 0 ? kToken : CodePointCost(cp);
      i += len == 0 ? 1 : len;
    } else if (IsAlnum(c)) {
      size_t end = RunEnd(text, i, IsAlnum);
      milli += AlnumRunCost(text.substr(i, end - i));
      i = end;
    } else if (IsSpace(c)) {
      size_t end = RunEnd(text, i, IsSpace);
      milli += WhitespaceCost(text.substr(i, end - i));
      i = end;
    } else if (IsPunct(c)) {
      if (size_t n = ContractionLength(text, i); n > 0) {
        milli += kToken;
        i += n;
        continue;
      }
      size_t end = RunEnd(text, i, IsPunct);
      milli += PunctRunCost(text.substr(i, end - i));
      i = end;
    } else {
      milli += kToken;  // control character
      ++i;
    }
  }
  int64_t total = (milli * (1000 + kMarginPermille) + 999'999) / 1'000'000 + kMarginTokens;
  return static_cast<size_t>(total);
}

}  // namespace agentckpt
