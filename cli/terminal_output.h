// Terminal output of the agentckpt CLI: human sizes and ages, tables aligned in columns, the
// progress indicator of long operations, and the mapping from Status to exit code.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/status.h"

namespace agentckpt {

// "512 B", "16.2 KB", "3.4 MB", "1.2 GB" (1 KB = 1024 bytes). Thread-safe.
std::string HumanSize(int64_t bytes);

// How long ago something happened, from an age in milliseconds: "12s ago", "3m ago", "2h ago",
// "5d ago"; "in the future" for a negative age. Thread-safe.
std::string HumanAge(int64_t age_ms);

// Milliseconds with a precision that fits the value: "0.42 ms", "12.3 ms", "1534 ms".
std::string HumanMillis(double ms);

// Rows of cells printed with every column as wide as its widest cell (two spaces between
// columns). Columns listed in `right_aligned` (0-based) are right-aligned (sizes, counts).
// Not thread-safe.
class Table {
 public:
  explicit Table(std::vector<std::string> header, std::vector<size_t> right_aligned = {});
  void AddRow(std::vector<std::string> cells);
  // Writes the header and the rows to `out`; nothing after the header when there are no rows.
  void Print(std::FILE* out) const;
  size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::vector<std::string>> rows_;  // the header first
  std::vector<size_t> right_aligned_;
};

// Progress of a long operation, on stderr. On a terminal: one line rewritten in place
// ("verifying 120/480 ..."), cleared by Done(). Not on a terminal: nothing, unless `plain_lines`
// is set, then each Update() that changes the text is printed as its own line. Never writes to
// stdout, so --json output stays clean. Not thread-safe.
class Progress {
 public:
  // `enabled` false: prints nothing at all (used with --json on a non-terminal, and in quiet
  // mode).
  explicit Progress(bool enabled = true, bool plain_lines = false);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Shows `text`. On a terminal, updates are drawn at most every 50 ms unless `force`.
  void Update(const std::string& text, bool force = false);
  // "what done/total" with a percentage.
  void Count(const std::string& what, int64_t done, int64_t total);
  // Clears the indicator line (terminal) so normal output can follow. Idempotent.
  void Done();
  bool on_terminal() const { return tty_; }

 private:
  bool enabled_;
  bool plain_;
  bool tty_;
  bool drawn_ = false;
  size_t last_width_ = 0;
  int64_t last_draw_us_ = 0;
  std::string last_text_;
};

// Prints "agentckpt <command>: <status>" on stderr and returns the exit code for `status`:
// 2 for kInvalidArgument, 3 for kUnavailable and kDeadlineExceeded, 1 for anything else.
int ReportError(const std::string& command, const Status& status);

// Prints "agentckpt <command>: <message>" on stderr for a bad setting (SettingReader's errors,
// sidecar/config.h) and returns 2: the same line and exit code in every subcommand.
int ReportSettingError(const std::string& command, const Status& status);

}  // namespace agentckpt
