#include "cli/terminal_output.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "common/env.h"

namespace agentckpt {

std::string HumanSize(int64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(bytes));
  } else if (bytes < 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f KB", b / 1024);
  } else if (bytes < int64_t{1024} * 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f MB", b / (1024 * 1024));
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f GB", b / (1024.0 * 1024 * 1024));
  }
  return buf;
}

std::string HumanAge(int64_t age_ms) {
  if (age_ms < 0) return "in the future";
  const long long s = static_cast<long long>(age_ms / 1000);
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%llds ago", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%lldm ago", s / 60);
  } else if (s < 86400) {
    std::snprintf(buf, sizeof(buf), "%lldh ago", s / 3600);
  } else {
    std::snprintf(buf, sizeof(buf), "%lldd ago", s / 86400);
  }
  return buf;
}

std::string HumanMillis(double ms) {
  char buf[32];
  if (ms < 10) {
    std::snprintf(buf, sizeof(buf), "%.2f ms", ms);
  } else if (ms < 100) {
    std::snprintf(buf, sizeof(buf), "%.1f ms", ms);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f ms", ms);
  }
  return buf;
}

Table::Table(std::vector<std::string> header, std::vector<size_t> right_aligned)
    : right_aligned_(std::move(right_aligned)) {
  rows_.push_back(std::move(header));
}

void Table::AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

void Table::Print(std::FILE* out) const {
  std::vector<size_t> width;
  for (const auto& row : rows_) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows_) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const bool last = i + 1 == row.size();
      const bool right =
          std::find(right_aligned_.begin(), right_aligned_.end(), i) != right_aligned_.end();
      const std::string pad(width[i] - row[i].size(), ' ');
      if (right) {
        line += pad + row[i];
      } else {
        line += row[i];
        if (!last) line += pad;
      }
      if (!last) line += "  ";
    }
    std::fprintf(out, "%s\n", line.c_str());
  }
}

Progress::Progress(bool enabled, bool plain_lines)
    : enabled_(enabled), plain_(plain_lines), tty_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { Done(); }

void Progress::Update(const std::string& text, bool force) {
  if (!enabled_) return;
  if (!tty_) {
    if (plain_ && text != last_text_) std::fprintf(stderr, "%s\n", text.c_str());
    last_text_ = text;
    return;
  }
  const int64_t now = Env::Default()->NowMonotonicMicros();
  if (!force && drawn_ && now - last_draw_us_ < 50'000) return;
  last_draw_us_ = now;
  std::string line = "\r" + text;
  if (text.size() < last_width_) line += std::string(last_width_ - text.size(), ' ');
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  last_width_ = text.size();
  drawn_ = true;
  last_text_ = text;
}

void Progress::Count(const std::string& what, int64_t done, int64_t total) {
  const int64_t pct = total > 0 ? done * 100 / total : 100;
  Update(what + " " + std::to_string(done) + "/" + std::to_string(total) + " (" +
             std::to_string(pct) + "%)",
         done == total);
}

void Progress::Done() {
  if (!enabled_ || !tty_ || !drawn_) return;
  std::fprintf(stderr, "\r%s\r", std::string(last_width_, ' ').c_str());
  std::fflush(stderr);
  drawn_ = false;
  last_width_ = 0;
}

int ReportError(const std::string& command, const Status& status) {
  std::fprintf(stderr, "agentckpt %s: %s\n", command.c_str(), status.ToString().c_str());
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      return 2;
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return 3;
    default:
      return 1;
  }
}

int ReportSettingError(const std::string& command, const Status& status) {
  std::fprintf(stderr, "agentckpt %s: %s\n", command.c_str(), status.message().c_str());
  return 2;
}

}  // namespace agentckpt
