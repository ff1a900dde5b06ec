// The include rules of docs/architecture.md: each library folder includes only the folders its
// rule allows (e.g. store/ never includes sidecar/, checkpoint/ never includes store/). The rules
// are read from the block between <!-- include-rules:begin --> and <!-- include-rules:end -->.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace agentckpt {
namespace {

namespace fs = std::filesystem;

// Key (a folder or a file, relative to the source root) -> the folders it may include.
using Rules = std::map<std::string, std::set<std::string>>;

std::string SourceDir() {
  const char* src = std::getenv("AGENTCKPT_SOURCE_DIR");
  return src != nullptr ? src : ".";
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Parses the rules block of `doc` ("key: folder folder ..." lines inside the markers).
Rules ParseRules(const std::string& doc) {
  Rules rules;
  const std::string begin = "<!-- include-rules:begin -->";
  const std::string end = "<!-- include-rules:end -->";
  size_t b = doc.find(begin);
  size_t e = doc.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) return rules;
  std::stringstream block(doc.substr(b + begin.size(), e - b - begin.size()));
  std::string line;
  while (std::getline(block, line)) {
    size_t colon = line.find(':');
    if (line.rfind("```", 0) == 0 || colon == std::string::npos) continue;
    std::stringstream allowed(line.substr(colon + 1));
    std::set<std::string>& set = rules[line.substr(0, colon)];
    for (std::string folder; allowed >> folder;) set.insert(folder);
  }
  return rules;
}

// The most specific key of `rules` that `path` is (a file key) or lies under (a folder key);
// "" when none.
std::string UnitOf(const Rules& rules, const std::string& path) {
  std::string best;
  for (const auto& [key, allowed] : rules) {
    bool match = path == key || path.rfind(key + "/", 0) == 0;
    if (match && key.size() > best.size()) best = key;
  }
  return best;
}

// The rule violations of one source file `path` with text `text`: every `#include "a/b..."`
// whose target is not in the file's own folder nor allowed by its rule. `is_project_dir` tells
// whether a first path component names a folder of the project (others are library headers).
std::vector<std::string> Violations(const Rules& rules, const std::string& path,
                                    const std::string& text,
                                    const std::function<bool(const std::string&)>& is_project_dir) {
  std::vector<std::string> found;
  const std::string unit = UnitOf(rules, path);
  if (unit.empty()) return {path + ": no include rule covers this file"};
  const std::string own_folder =
      fs::path(unit).has_extension() ? fs::path(unit).parent_path().string() : unit;
  static const std::regex include_re(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::stringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    std::smatch m;
    if (!std::regex_search(line, m, include_re)) continue;
    const std::string target = m[1];
    size_t slash = target.find('/');
    if (slash == std::string::npos || !is_project_dir(target.substr(0, slash))) continue;
    std::string target_unit = UnitOf(rules, target);
    // A file key (store/open_store.cc) is not a folder one includes; use its folder.
    if (fs::path(target_unit).has_extension()) {
      target_unit = fs::path(target).parent_path().string();
    }
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (target_unit.empty()) {
      found.push_back(where + "includes \"" + target + "\", which no include rule covers");
    } else if (target_unit != own_folder && target_unit != unit &&
               rules.at(unit).count(target_unit) == 0) {
      found.push_back(where + unit + "/ may not include " + target_unit + "/ (\"" + target + "\")");
    }
  }
  return found;
}

Rules DocumentedRules() {
  return ParseRules(ReadFile(fs::path(SourceDir()) / "docs" / "architecture.md"));
}

bool IsProjectDir(const std::string& name) {
  return fs::is_directory(fs::path(SourceDir()) / name);
}

TEST(IncludeRulesTest, TheDocumentHasRulesForTheLibraryFolders) {
  Rules rules = DocumentedRules();
  for (const char* folder : {"common", "checkpoint", "store", "store/sqlite", "store/firestore",
                             "nats", "http", "context", "observability", "sidecar", "cli"}) {
    EXPECT_EQ(rules.count(folder), 1u) << "docs/architecture.md has no include rule for " << folder;
  }
  EXPECT_EQ(rules["common"].size(), 0u) << "common/ includes nothing of the project";
}

TEST(IncludeRulesTest, EverySourceFileFollowsTheRules) {
  Rules rules = DocumentedRules();
  ASSERT_FALSE(rules.empty()) << "no include-rules block in docs/architecture.md";
  std::set<std::string> files;
  for (const auto& [key, allowed] : rules) {
    fs::path root = fs::path(SourceDir()) / key;
    if (fs::is_regular_file(root)) files.insert(key);
    if (!fs::is_directory(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".h" || ext == ".cc")) {
        files.insert(fs::relative(entry.path(), SourceDir()).string());
      }
    }
  }
  EXPECT_GT(files.size(), 100u) << "the scan found too few sources under " << SourceDir();
  for (const std::string& file : files) {
    for (const std::string& v :
         Violations(rules, file, ReadFile(fs::path(SourceDir()) / file), IsProjectDir)) {
      ADD_FAILURE() << v;
    }
  }
}

// The checker itself: forbidden includes are found, allowed ones are not.
TEST(IncludeRulesTest, AForbiddenIncludeIsReported) {
  Rules rules = DocumentedRules();
  auto project = [](const std::string& name) {
    return name == "store" || name == "sidecar" || name == "checkpoint" || name == "common" ||
           name == "tests" || name == "context" || name == "http";
  };
  auto check = [&](const std::string& path, const std::string& include) {
    return Violations(rules, path, "#include <vector>\n#include \"" + include + "\"\n", project);
  };
  EXPECT_EQ(check("store/lease.cc", "sidecar/sidecar.h").size(), 1u);
  EXPECT_EQ(check("checkpoint/checkpoint.cc", "store/checkpoint_store.h").size(), 1u);
  EXPECT_EQ(check("store/sqlite/sqlite_store.cc", "store/firestore/firestore_store.h").size(), 1u);
  EXPECT_EQ(check("store/lease.cc", "store/sqlite/sqlite_store.h").size(), 1u);
  EXPECT_EQ(check("context/context_state.cc", "http/api_router.h").size(), 1u);
  EXPECT_EQ(check("store/lease.cc", "tests/support/temp_dir.h").size(), 1u);
  EXPECT_EQ(check("nowhere/file.cc", "common/status.h").size(), 1u);

  EXPECT_TRUE(check("store/lease.cc", "checkpoint/checkpoint.h").empty());
  EXPECT_TRUE(check("store/open_store.cc", "store/sqlite/sqlite_store.h").empty());
  EXPECT_TRUE(check("store/sqlite/sqlite_store.cc", "store/checkpoint_store.h").empty());
  EXPECT_TRUE(check("http/api_router.cc", "context/context_state.h").empty());
  EXPECT_TRUE(check("store/lease.cc", "nats/nats.h").empty()) << "not a project folder";
}

}  // namespace
}  // namespace agentckpt
