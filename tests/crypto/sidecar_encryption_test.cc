// The real `agentckpt run` with encryption at rest: checkpoints are written encrypted, read back
// decrypted over the API and at start, keys rotate, and a missing or unreadable key is exit 2.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/crypto/crypto_test_util.h"
#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

using json = nlohmann::json;

class SidecarEncryptionTest : public SidecarEnvTest {
 protected:
  std::string KeyFile(char seed) {
    std::string path = dir_.File(std::string("key-") + seed + ".hex");
    WriteTextFile(path, HexKey(seed) + "\n");
    return path;
  }
  std::string StoreBytes() const {
    std::string all;
    for (const char* suffix : {"", "-wal"}) {
      std::ifstream f(dir_.File(std::string("store.db") + suffix), std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      all += ss.str();
    }
    return all;
  }
  static std::string ContextWithMarker() {
    json body = json::parse(FixtureContextBody("checkpoint-16k.json"));
    body["contextSummary"]["draftContent"] = std::string("resume here: ") + kSecretMarker;
    return body.dump();
  }
  std::string CreateCheckpoint() {
    HttpReply r = HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"manual"})");
    EXPECT_EQ(r.status, 201) << r.body;
    return json::parse(r.body, nullptr, false).value("checkpointId", "");
  }
};

TEST_F(SidecarEncryptionTest, WritesEncryptedReadsDecryptedAndRotates) {
  const std::string key_a = KeyFile('a');
  const std::string key_b = KeyFile('b');
  std::string first_id;
  {
    auto sidecar = StartSidecar({{"CKPT_ENCRYPTION_KEY_FILE", key_a}});
    ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", ContextWithMarker()).status, 200);
    first_id = CreateCheckpoint();
    HttpReply got = HttpCall(port_, "GET", "/v1/checkpoints/" + first_id);
    ASSERT_EQ(got.status, 200) << got.body;
    EXPECT_NE(got.body.find(kSecretMarker), std::string::npos);
    // Served decrypted: the plaintext version 2 document, with the tool-call ledger.
    EXPECT_EQ(json::parse(got.body)["schemaVersion"], 2);
    EXPECT_TRUE(json::parse(got.body).contains("ledger"));
    ASSERT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
  }
  EXPECT_EQ(StoreBytes().find(kSecretMarker), std::string::npos);
  auto stored = OpenTestStore()->GetById(kProcAgent, first_id);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  ASSERT_TRUE(stored->encrypted_context_summary.has_value());
  EXPECT_EQ(stored->encrypted_context_summary->key_id, KeyFromSeed('a').id);

  // Rotate: B is current, A is kept for reading. The context is seeded from the A checkpoint.
  {
    auto sidecar = StartSidecar(
        {{"CKPT_ENCRYPTION_KEY_FILE", key_b}, {"CKPT_ENCRYPTION_OLD_KEY_FILES", key_a}});
    HttpReply context = HttpCall(port_, "GET", "/v1/context");
    ASSERT_EQ(context.status, 200) << context.body;
    EXPECT_NE(context.body.find(kSecretMarker), std::string::npos) << context.body;
    std::string second_id = CreateCheckpoint();
    EXPECT_EQ(HttpCall(port_, "GET", "/v1/checkpoints/" + first_id).status, 200);
    ASSERT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
    auto second = OpenTestStore()->GetById(kProcAgent, second_id);
    ASSERT_TRUE(second.ok()) << second.status().ToString();
    EXPECT_EQ(second->encrypted_context_summary->key_id, KeyFromSeed('b').id);
  }
  EXPECT_EQ(StoreBytes().find(kSecretMarker), std::string::npos);
}

TEST_F(SidecarEncryptionTest, MissingOrUnreadableKeyIsExitCode2) {
  {
    auto sidecar = StartSidecar({{"CKPT_ENCRYPTION_KEY_FILE", KeyFile('a')}});
    ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", ContextWithMarker()).status, 200);
    CreateCheckpoint();
    ASSERT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
  }
  // No key while the store holds encrypted checkpoints: refused, never a plaintext fallback.
  SidecarProcess no_key(SidecarEnv(), dir_.path());
  EXPECT_EQ(no_key.Wait(10000), 2);
  EXPECT_NE(no_key.Stderr().find("CKPT_ENCRYPTION_KEY_FILE"), std::string::npos) << no_key.Stderr();
  EXPECT_NE(no_key.Stderr().find("encrypted checkpoints"), std::string::npos) << no_key.Stderr();

  SidecarProcess unreadable(SidecarEnv({{"CKPT_ENCRYPTION_KEY_FILE", dir_.File("no-such.key")}}),
                            dir_.path());
  EXPECT_EQ(unreadable.Wait(10000), 2);
  EXPECT_NE(unreadable.Stderr().find("CKPT_ENCRYPTION_KEY_FILE"), std::string::npos)
      << unreadable.Stderr();

  WriteTextFile(dir_.File("short.key"), "0123456789abcdef\n");
  SidecarProcess malformed(SidecarEnv({{"CKPT_ENCRYPTION_KEY_FILE", dir_.File("short.key")}}),
                           dir_.path());
  EXPECT_EQ(malformed.Wait(10000), 2);
  EXPECT_NE(malformed.Stderr().find("64 hex characters"), std::string::npos) << malformed.Stderr();

  // The wrong key: the sidecar starts, but nothing it cannot decrypt is restored as context.
  auto wrong = StartSidecar({{"CKPT_ENCRYPTION_KEY_FILE", KeyFile('c')}});
  HttpReply context = HttpCall(port_, "GET", "/v1/context");
  EXPECT_EQ(context.body.find(kSecretMarker), std::string::npos);
}

// A standby (another sidecar holds the writer lease) without the key is refused at its start
// too: it is not the writer yet, so it makes the check the writer makes when it loads.
TEST_F(SidecarEncryptionTest, AStandbyWithoutKeyIsExitCode2) {
  auto writer = StartSidecar({{"CKPT_ENCRYPTION_KEY_FILE", KeyFile('a')}});
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", ContextWithMarker()).status, 200);
  CreateCheckpoint();
  SidecarProcess standby(
      SidecarEnv({{"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(PickFreePort())}}), dir_.path());
  EXPECT_EQ(standby.Wait(10000), 2);
  EXPECT_NE(standby.Stderr().find("encrypted checkpoints"), std::string::npos) << standby.Stderr();
  // The writer was not disturbed.
  EXPECT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"manual"})").status, 201);
  ASSERT_EQ(writer->Signal(SIGTERM), 0) << writer->Stderr();
}

// A standby that passed its start check while the newest checkpoint was plaintext, and gets the
// lease after the writer (with the key) wrote encrypted ones: it refuses to become the writer,
// says why and stops, and writes nothing.
TEST_F(SidecarEncryptionTest, AStandbyThatGetsTheLeaseAfterEncryptionStopsWithoutWriting) {
  {
    auto plain = StartSidecar();
    ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", ContextWithMarker()).status, 200);
    CreateCheckpoint();
    ASSERT_EQ(plain->Signal(SIGTERM), 0) << plain->Stderr();
  }
  auto writer = StartSidecar({{"CKPT_ENCRYPTION_KEY_FILE", KeyFile('a')}});
  const int port2 = PickFreePort();
  const std::string second_dir = dir_.path() + "/second";
  std::filesystem::create_directories(second_dir);
  SidecarProcess standby(SidecarEnv({{"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(port2)}}),
                         second_dir);
  ASSERT_TRUE(standby.WaitHealthy(port2)) << standby.Describe();
  CreateCheckpoint();                                         // encrypted: now the newest
  ASSERT_EQ(writer->Signal(SIGTERM), 0) << writer->Stderr();  // releases the lease
  EXPECT_NE(standby.Wait(30000), -1) << standby.Describe();
  EXPECT_NE(standby.Stdout().find("refusing to become the writer"), std::string::npos)
      << standby.Describe();
  auto latest = OpenTestStore()->GetLatestVerified(kProcAgent);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_TRUE(latest->checkpoint.encrypted_context_summary.has_value());
}

}  // namespace
}  // namespace agentckpt::testing
