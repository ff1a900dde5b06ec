// docs/configuration.md documents every setting `agentckpt run` knows (sidecar/config.cc
// SettingSpecs): one table row with its flag, its environment variable and its default.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sidecar/config.h"

namespace agentckpt {
namespace {

std::vector<std::string> TableRows() {
  const char* src = std::getenv("AGENTCKPT_SOURCE_DIR");
  std::ifstream in(std::string(src != nullptr ? src : ".") + "/docs/configuration.md");
  std::vector<std::string> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| `--", 0) == 0) rows.push_back(line);
  }
  return rows;
}

// The table's cells of `row`, trimmed.
std::vector<std::string> Cells(const std::string& row) {
  std::vector<std::string> cells;
  std::stringstream ss(row);
  std::string cell;
  std::getline(ss, cell, '|');  // before the first bar
  while (std::getline(ss, cell, '|')) {
    size_t b = cell.find_first_not_of(' ');
    size_t e = cell.find_last_not_of(' ');
    cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  return cells;
}

TEST(ConfigurationDocTest, EverySettingHasARowWithItsVariableAndDefault) {
  std::vector<std::string> rows = TableRows();
  ASSERT_FALSE(rows.empty()) << "no settings table in docs/configuration.md";
  for (const SettingSpec& spec : SettingSpecs()) {
    const std::string flag = "`--" + spec.flag + "`";
    const std::string* found = nullptr;
    for (const std::string& row : rows) {
      if (!Cells(row).empty() && Cells(row)[0] == flag) found = &row;
    }
    if (found == nullptr) {
      ADD_FAILURE() << "docs/configuration.md has no row for " << flag << " (" << spec.env
                    << "); add: | " << flag << " | `" << spec.env << "` | "
                    << (spec.default_text.empty() ? "(none)" : "`" + spec.default_text + "`")
                    << " | " << spec.help << " |";
      continue;
    }
    std::vector<std::string> cells = Cells(*found);
    ASSERT_GE(cells.size(), 4u) << *found;
    EXPECT_EQ(cells[1], "`" + spec.env + "`") << "variable of " << flag;
    if (spec.default_text.empty()) {
      EXPECT_TRUE(cells[2].rfind("(none", 0) == 0 || cells[2] == "(required)" ||
                  cells[2] == "(derived)")
          << flag << " has no default; the row says " << cells[2];
    } else {
      EXPECT_EQ(cells[2], "`" + spec.default_text + "`") << "default of " << flag;
    }
  }
}

TEST(ConfigurationDocTest, EveryRowIsASetting) {
  for (const std::string& row : TableRows()) {
    std::string flag = Cells(row)[0];
    bool known = false;
    for (const SettingSpec& spec : SettingSpecs()) known |= flag == "`--" + spec.flag + "`";
    EXPECT_TRUE(known) << "docs/configuration.md documents " << flag
                       << ", which agentckpt run does not know";
  }
}

}  // namespace
}  // namespace agentckpt
