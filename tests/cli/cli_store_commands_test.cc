// The store subcommands (list, show, verify, prune, status) and --help of every subcommand, run
// as the real binary against a real SQLite store file.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <regex>
#include <sstream>

#include "checkpoint/canonical.h"
#include "common/env.h"
#include "store/checkpoint_store.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

constexpr char kAgent[] = "agent-cli";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class CliStoreCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenStore(Url());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    const int64_t now = Env::Default()->NowUnixMillis();
    for (int64_t seq = 1; seq <= 3; ++seq) {
      Checkpoint cp = MakeCheckpoint(kAgent, seq);
      cp.timestamp_ms = now - (4 - seq) * 5 * 60 * 1000;  // 15, 10 and 5 minutes ago
      if (seq == 3) cp.context_summary.draft_content = std::string(20000, 'd');
      auto sealed = Seal(cp);
      ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
      ASSERT_TRUE(store_->Put(*sealed, PutOptions{}).ok());
      ids_.push_back(sealed->doc.checkpoint_id);
    }
  }
  std::string Url() const { return "sqlite://" + dir_.File("store.db"); }
  CliResult Run(std::vector<std::string> args) {
    args.insert(args.end(), {"--agent", kAgent, "--store", Url()});
    return RunCli(args);
  }
  void Corrupt(int64_t sequence) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir_.File("store.db").c_str(), &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    const std::string sql =
        "UPDATE checkpoints SET document = x'00' WHERE sequence = " + std::to_string(sequence);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }

  TempDir dir_;
  std::unique_ptr<CheckpointStore> store_;
  std::vector<std::string> ids_;  // by sequence, from 1
};

TEST(CliHelpTest, EverySubcommandHasHelp) {
  CliResult top = RunCli({"--help"});
  ASSERT_EQ(top.exit_code, 0) << Describe(top);
  const std::vector<std::string> subs = {"run",   "setup-stream", "list",    "show",  "verify",
                                         "prune", "status",       "restore", "create"};
  for (const std::string& sub : subs) {
    EXPECT_NE(top.out.find(sub), std::string::npos) << sub << " missing from:\n" << top.out;
    CliResult r = RunCli({sub, "--help"});
    EXPECT_EQ(r.exit_code, 0) << sub << ": " << Describe(r);
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << sub;
    EXPECT_NE(r.out.find(sub), std::string::npos) << sub;
    EXPECT_NE(r.out.find("--help"), std::string::npos) << sub;
  }
  // Every subcommand but run offers --json.
  for (const std::string& sub : subs) {
    if (sub == "run") continue;
    EXPECT_NE(RunCli({sub, "--help"}).out.find("--json"), std::string::npos) << sub;
  }
}

TEST(CliHelpTest, BadArgumentsExit2) {
  EXPECT_EQ(RunCli({"list"}).exit_code, 2);  // --agent missing
  EXPECT_EQ(RunCli({"list", "--agent", "a", "--limit", "0"}).exit_code, 2);
  EXPECT_EQ(RunCli({"no-such-command"}).exit_code, 2);
  EXPECT_EQ(RunCli({"create", "--agent", "a", "--trigger", "periodic"}).exit_code, 2);
}

TEST_F(CliStoreCommandsTest, ListIsAlignedWithHumanSizesAndAges) {
  CliResult r = Run({"list"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  // Every column starts at the same offset on every line.
  const size_t id_col = lines[0].find("CHECKPOINT");
  const size_t size_end = lines[0].find("SIZE") + 4;
  const size_t age_col = lines[0].find("AGE");
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].find(ids_[3 - i]), id_col) << r.out;  // newest first
    EXPECT_TRUE(lines[i][size_end - 1] == 'B') << r.out;     // right-aligned "... KB" / "B"
    EXPECT_NE(lines[i].find("m ago"), std::string::npos) << r.out;
    EXPECT_NE(lines[i][age_col], ' ') << r.out;  // the age starts at its column
    EXPECT_EQ(lines[i][age_col - 1], ' ') << r.out;
  }
  EXPECT_TRUE(std::regex_search(lines[1], std::regex(R"(\b\d+\.\d KB\b)"))) << lines[1];
  EXPECT_NE(lines[1].find("5m ago"), std::string::npos) << lines[1];
  EXPECT_NE(lines[3].find("15m ago"), std::string::npos) << lines[3];
}

TEST_F(CliStoreCommandsTest, ListJsonParses) {
  CliResult r = Run({"list", "--json", "--limit", "2"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  nlohmann::json j = r.Json();
  ASSERT_TRUE(j.is_array()) << r.out;
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["checkpointId"], ids_[2]);
  EXPECT_EQ(j[0]["sequenceNumber"], 3);
  EXPECT_EQ(j[1]["sequenceNumber"], 2);
  EXPECT_GT(j[0]["sizeBytes"].get<int64_t>(), j[1]["sizeBytes"].get<int64_t>() + 4000);
}

TEST_F(CliStoreCommandsTest, ShowLatestBySequenceAndById) {
  CliResult latest = Run({"show", "latest", "--json"});
  ASSERT_EQ(latest.exit_code, 0) << Describe(latest);
  EXPECT_EQ(latest.Json()["checkpointId"], ids_[2]);
  CliResult by_seq = Run({"show", "1", "--json"});
  ASSERT_EQ(by_seq.exit_code, 0) << Describe(by_seq);
  EXPECT_EQ(by_seq.Json()["checkpointId"], ids_[0]);
  CliResult human = Run({"show", ids_[1]});
  ASSERT_EQ(human.exit_code, 0) << Describe(human);
  EXPECT_NE(human.out.find("sequence 2, verified"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("10m ago"), std::string::npos) << human.out;
  CliResult missing = Run({"show", "99"});
  EXPECT_EQ(missing.exit_code, 1) << Describe(missing);
  EXPECT_NE(missing.err.find("NOT_FOUND"), std::string::npos) << missing.err;
}

TEST_F(CliStoreCommandsTest, VerifyExits1OnCorruption) {
  CliResult clean = Run({"verify", "--json"});
  ASSERT_EQ(clean.exit_code, 0) << Describe(clean);
  EXPECT_EQ(clean.Json()["checked"], 3);
  EXPECT_EQ(clean.Json()["corrupted"], 0);
  Corrupt(2);
  CliResult bad = Run({"verify", "--json"});
  ASSERT_EQ(bad.exit_code, 1) << Describe(bad);
  nlohmann::json j = bad.Json();
  EXPECT_EQ(j["corrupted"], 1);
  for (const auto& row : j["results"]) {
    EXPECT_EQ(row["ok"].get<bool>(), row["sequenceNumber"] != 2) << row.dump();
  }
  // Not a terminal: no progress line on stderr.
  EXPECT_EQ(bad.err, "");
  CliResult human = Run({"verify"});
  EXPECT_EQ(human.exit_code, 1);
  EXPECT_NE(human.out.find("3 checked, 1 corrupted"), std::string::npos) << human.out;
  // show latest passes over nothing here (3 is intact); show 2 reports the damage.
  EXPECT_EQ(Run({"show", "2"}).exit_code, 1);
}

// On a terminal, verify draws a progress line on stderr; stdout stays pure JSON.
TEST_F(CliStoreCommandsTest, ProgressGoesToTheTerminalNeverIntoJson) {
  std::vector<std::string> args = {"verify", "--json", "--agent", kAgent, "--store", Url()};
  CliResult r = RunCli(args, {}, 30000, /*stderr_on_terminal=*/true);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.err.find("verifying 3/3 (100%)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find('\r'), std::string::npos) << r.err;  // one line, redrawn in place
  EXPECT_TRUE(r.Json().is_object()) << r.out;
  EXPECT_EQ(r.out.find("verifying"), std::string::npos) << r.out;
}

TEST_F(CliStoreCommandsTest, PruneAndStatus) {
  CliResult pruned = Run({"prune", "--keep", "1", "--json"});
  ASSERT_EQ(pruned.exit_code, 0) << Describe(pruned);
  EXPECT_EQ(pruned.Json()["deleted"], 2);
  auto left = store_->List(kAgent, 10);
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].sequence_number, 3);
  CliResult status = Run({"status", "--json"});
  ASSERT_EQ(status.exit_code, 0) << Describe(status);
  EXPECT_EQ(status.Json()["lastSequence"], 3);
  CliResult human = Run({"status"});
  EXPECT_NE(human.out.find("last sequence  3"), std::string::npos) << human.out;
}

TEST(CliStoreMissingTest, AMissingStoreFileIsNotCreated) {
  TempDir dir;
  const std::string path = dir.File("typo.db");
  CliResult r = RunCli({"list", "--agent", kAgent, "--store", "sqlite://" + path});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.err.find("no store at"), std::string::npos) << r.err;
  EXPECT_FALSE(Env::Default()->FileExists(path));
  // $CKPT_STORE is the default.
  CliResult from_env = RunCli({"status", "--agent", kAgent}, {{"CKPT_STORE", "sqlite://" + path}});
  EXPECT_EQ(from_env.exit_code, 1) << Describe(from_env);
  EXPECT_NE(from_env.err.find(path), std::string::npos) << from_env.err;
}

}  // namespace
}  // namespace agentckpt::testing
