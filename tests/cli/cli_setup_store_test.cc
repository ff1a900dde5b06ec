// `agentckpt setup-store` against a real nats-server: creates the three streams with the asked
// replicas, is idempotent, refuses bad arguments with exit 2, and the store then opens without
// create=1.
#include <gtest/gtest.h>

#include "store/jetstream/jetstream_store.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/nats_server.h"

namespace agentckpt::testing {
namespace {

TEST(CliSetupStoreTest, CreatesTheStreamsOnceAndTheStoreOpens) {
  NatsServerProcess server;
  const std::string url = "jetstream://127.0.0.1:" + std::to_string(server.port()) + "/SETUP";
  JetStreamStoreOptions plain;
  plain.api.servers = server.url();
  plain.prefix = "SETUP";
  auto before = JetStreamStore::Open(plain);
  ASSERT_FALSE(before.ok());
  EXPECT_EQ(before.status().code(), StatusCode::kNotFound) << before.status().ToString();

  for (int run = 0; run < 2; ++run) {
    CliResult r = RunCli({"setup-store", "--store", url, "--replicas", "1", "--json"});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    auto j = r.Json();
    ASSERT_TRUE(j.is_object()) << Describe(r);
    EXPECT_EQ(j["prefix"], "SETUP");
    ASSERT_EQ(j["streams"].size(), 3u);
    EXPECT_EQ(j["streams"][0]["stream"], "SETUP_AGENTS");
    EXPECT_EQ(j["streams"][1]["stream"], "SETUP_CKPT");
    EXPECT_EQ(j["streams"][2]["stream"], "SETUP_JOURNAL");
    for (const auto& s : j["streams"]) EXPECT_EQ(s["replicas"], 1);
  }
  auto after = JetStreamStore::Open(plain);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_TRUE((*after)->Ping().ok());

  // The hosts may come from NATS_URL.
  CliResult from_env = RunCli({"setup-store", "--store", "jetstream:///SETUP", "--replicas", "1"},
                              {{"NATS_URL", server.url()}});
  EXPECT_EQ(from_env.exit_code, 0) << Describe(from_env);
  EXPECT_NE(from_env.out.find("SETUP_JOURNAL"), std::string::npos) << Describe(from_env);
}

TEST(CliSetupStoreTest, BadArgumentsExitTwo) {
  CliResult sqlite = RunCli({"setup-store", "--store", "sqlite:///tmp/x.db"});
  EXPECT_EQ(sqlite.exit_code, 2) << Describe(sqlite);
  EXPECT_NE(sqlite.err.find("jetstream://"), std::string::npos) << Describe(sqlite);
  CliResult replicas = RunCli({"setup-store", "--store", "jetstream://127.0.0.1:1/P",
                               "--replicas", "7"});
  EXPECT_EQ(replicas.exit_code, 2) << Describe(replicas);
  CliResult option = RunCli({"setup-store", "--store", "jetstream://127.0.0.1:1/P?bogus=1"});
  EXPECT_EQ(option.exit_code, 2) << Describe(option);
  EXPECT_NE(option.err.find("unknown option"), std::string::npos) << Describe(option);
  CliResult prefix = RunCli({"setup-store", "--store", "jetstream://127.0.0.1:1/bad.prefix"});
  EXPECT_EQ(prefix.exit_code, 2) << Describe(prefix);
}

TEST(CliSetupStoreTest, NoServerExitsThree) {
  const int port = PickFreePort();
  CliResult r = RunCli(
      {"setup-store", "--store", "jetstream://127.0.0.1:" + std::to_string(port) + "/P"});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
}

}  // namespace
}  // namespace agentckpt::testing
