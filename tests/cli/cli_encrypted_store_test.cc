// The store subcommands on a store with encrypted summaries: with the key (flag or environment)
// they read and verify the plaintext; without it they refuse with the setting named.
#include <gtest/gtest.h>

#include "common/env.h"
#include "crypto/encrypting_store.h"
#include "tests/cli/cli_runner.h"
#include "tests/crypto/crypto_test_util.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

constexpr char kAgent[] = "agent-enc";

class CliEncryptedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteTextFile(KeyFile(), HexKey('a') + "\n");
    auto inner = OpenStore(Url());
    ASSERT_TRUE(inner.ok()) << inner.status().ToString();
    crypto::EncryptingStore store(std::move(*inner), crypto::Keyring(KeyFromSeed('a'), {}),
                                  Env::Default());
    for (int64_t seq = 1; seq <= 2; ++seq) {
      auto put = store.Put(SealedWithMarker(kAgent, seq), PutOptions{});
      ASSERT_TRUE(put.ok()) << put.status().ToString();
    }
  }
  std::string Url() const { return "sqlite://" + dir_.File("store.db"); }
  std::string KeyFile() const { return dir_.File("key.hex"); }
  CliResult Run(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.end(), {"--agent", kAgent, "--store", Url()});
    return RunCli(args, env);
  }

  TempDir dir_;
};

TEST_F(CliEncryptedStoreTest, WithTheKeyFlagShowAndVerifyReadThePlaintext) {
  CliResult shown = Run({"show", "latest", "--json", "--encryption-key-file", KeyFile()});
  ASSERT_EQ(shown.exit_code, 0) << Describe(shown);
  EXPECT_NE(shown.out.find(kSecretMarker), std::string::npos) << shown.out;
  CliResult verified = Run({"verify", "--encryption-key-file", KeyFile()});
  EXPECT_EQ(verified.exit_code, 0) << Describe(verified);
}

TEST_F(CliEncryptedStoreTest, TheKeyFileComesFromTheEnvironmentToo) {
  CliResult shown = Run({"show", "latest", "--json"}, {{"CKPT_ENCRYPTION_KEY_FILE", KeyFile()}});
  ASSERT_EQ(shown.exit_code, 0) << Describe(shown);
  EXPECT_NE(shown.out.find(kSecretMarker), std::string::npos) << shown.out;
}

TEST_F(CliEncryptedStoreTest, WithoutAKeyTheStoreIsRefusedWithTheSettingNamed) {
  CliResult shown = Run({"show", "latest"});
  EXPECT_NE(shown.exit_code, 0) << Describe(shown);
  EXPECT_NE(shown.err.find("CKPT_ENCRYPTION_KEY_FILE"), std::string::npos) << Describe(shown);
  EXPECT_EQ(shown.out.find(kSecretMarker), std::string::npos) << shown.out;
}

TEST_F(CliEncryptedStoreTest, AWrongKeyIsAClearError) {
  const std::string wrong = dir_.File("wrong.hex");
  WriteTextFile(wrong, HexKey('b') + "\n");
  CliResult shown = Run({"show", "latest", "--encryption-key-file", wrong});
  EXPECT_NE(shown.exit_code, 0) << Describe(shown);
  EXPECT_EQ(shown.out.find(kSecretMarker), std::string::npos) << shown.out;
  EXPECT_FALSE(shown.err.empty()) << Describe(shown);
}

}  // namespace
}  // namespace agentckpt::testing
