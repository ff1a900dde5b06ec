#include "common/time_format.h"


namespace agentckpt {
namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

bool ReadDigits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::string FormatRfc3339Millis(int64_t unix_millis) {
  int64_t days = unix_millis >= 0 ? unix_millis / 86400000 : -((-unix_millis + 86399999) / 86400000);
  int64_t rem = unix_millis - days * 86400000;
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  // Hand-formatted (hot path of checkpoint serialization): "YYYY-MM-DDTHH:MM:SS.mmmZ".
  char buf[24];
  auto put = [&](int pos, int64_t v, int width) {
    for (int i = width - 1; i >= 0; --i, v /= 10) buf[pos + i] = static_cast<char>('0' + v % 10);
  };
  if (y < 0 || y > 9999) y = y < 0 ? 0 : 9999;
  put(0, y, 4);
  buf[4] = '-';
  put(5, m, 2);
  buf[7] = '-';
  put(8, d, 2);
  buf[10] = 'T';
  put(11, rem / 3600000, 2);
  buf[13] = ':';
  put(14, rem / 60000 % 60, 2);
  buf[16] = ':';
  put(17, rem / 1000 % 60, 2);
  buf[19] = '.';
  put(20, rem % 1000, 3);
  buf[23] = 'Z';
  return std::string(buf, 24);
}

StatusOr<int64_t> ParseRfc3339Millis(std::string_view s) {
  auto bad = [&](const char* why) {
    return InvalidArgumentError(std::string("not an RFC 3339 timestamp (") + why + "): \"" +
                                std::string(s.substr(0, 64)) + "\"");
  };
  int year, mon, day, hh, mm, ss;
  if (!ReadDigits(s, 0, 4, &year) || s.size() < 19 || s[4] != '-' || !ReadDigits(s, 5, 2, &mon) ||
      s[7] != '-' || !ReadDigits(s, 8, 2, &day) || (s[10] != 'T' && s[10] != 't') ||
      !ReadDigits(s, 11, 2, &hh) || s[13] != ':' || !ReadDigits(s, 14, 2, &mm) || s[16] != ':' ||
      !ReadDigits(s, 17, 2, &ss)) {
    return bad("expected YYYY-MM-DDTHH:MM:SS");
  }
  if (year < 1 || mon < 1 || mon > 12 || day < 1 ||
      static_cast<unsigned>(day) > DaysInMonth(year, static_cast<unsigned>(mon))) {
    return bad("date out of range");
  }
  if (hh > 23 || mm > 59 || ss > 60) return bad("time out of range");
  if (ss == 60) ss = 59;  // leap second: clamp
  size_t pos = 19;
  int millis = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (pos - start < 3) millis = millis * 10 + (s[pos] - '0');
      ++pos;
    }
    if (pos == start) return bad("empty fraction");
    for (size_t n = pos - start; n < 3; ++n) millis *= 10;
  }
  if (pos >= s.size()) return bad("missing time zone");
  int64_t offset_min = 0;
  if (s[pos] == 'Z' || s[pos] == 'z') {
    ++pos;
  } else if (s[pos] == '+' || s[pos] == '-') {
    int oh, om;
    if (!ReadDigits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !ReadDigits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return bad("bad offset");
    }
    offset_min = (oh * 60 + om) * (s[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return bad("bad time zone");
  }
  if (pos != s.size()) return bad("trailing characters");
  int64_t days = DaysFromCivil(year, static_cast<unsigned>(mon), static_cast<unsigned>(day));
  int64_t secs = days * 86400 + hh * 3600 + mm * 60 + ss - offset_min * 60;
  return secs * 1000 + millis;
}

}  // namespace agentckpt
