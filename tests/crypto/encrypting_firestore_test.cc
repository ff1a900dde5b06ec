// EncryptingStore in front of FirestoreStore on the emulator (a real child process): round trip,
// no plaintext in the stored document, tamper fallback, and the store contract.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/env.h"
#include "common/fake_env.h"
#include "crypto/encrypting_store.h"
#include "crypto/summary_cipher.h"
#include "tests/crypto/crypto_test_util.h"
#include "tests/firestore/emulator_process.h"
#include "tests/store/store_contract.h"

namespace agentckpt::testing {
namespace {

using json = nlohmann::json;

EmulatorProcess* g_emulator = nullptr;

class EmulatorEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    g_emulator = new EmulatorProcess();
    Status s = g_emulator->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void TearDown() override {
    delete g_emulator;
    g_emulator = nullptr;
  }
};

const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new EmulatorEnvironment);

std::string& LastProject() {
  static std::string project;
  return project;
}

std::string NextProject(const std::string& prefix) {
  static std::atomic<int> next{0};
  LastProject() = prefix + "-" + std::to_string(next.fetch_add(1));
  return LastProject();
}

void DamageFirestoreSequence(const std::string& /*temp_dir*/, const std::string& agent,
                             const std::string& checkpoint_id) {
  DamageSnapshotSequence(g_emulator, LastProject(), agent, checkpoint_id);
}

std::unique_ptr<CheckpointStore> OpenEncryptedFirestore(const std::string& /*temp_dir*/) {
  if (g_emulator == nullptr) {
    ADD_FAILURE() << "the emulator is not running";
    return nullptr;
  }
  return std::make_unique<crypto::EncryptingStore>(
      OpenEmulatorStore(g_emulator->host_port(), NextProject("enc-contract")),
      crypto::Keyring(KeyFromSeed('a'), {}), Env::Default());
}

INSTANTIATE_TEST_SUITE_P(EncryptedFirestore, StoreContractTest,
                         ::testing::Values(StoreFactory{"encrypted_firestore",
                                                        OpenEncryptedFirestore, nullptr,
                                                        DamageFirestoreSequence}),
                         [](const auto& info) { return info.param.name; });

class EncryptingFirestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(g_emulator, nullptr);
    project_ = NextProject("enc");
    store_ = std::make_unique<crypto::EncryptingStore>(
        OpenEmulatorStore(g_emulator->host_port(), project_),
        crypto::Keyring(KeyFromSeed('b'), {KeyFromSeed('a')}), &env_);
  }
  std::string RawDocument(const std::string& agent, const std::string& id) {
    auto reply = g_emulator->Request("GET", "/v1/projects/" + project_ +
                                                "/databases/(default)/documents/checkpoints/" +
                                                agent + "/snapshots/" + id);
    EXPECT_TRUE(reply.ok());
    EXPECT_EQ(reply->first, 200) << reply->second;
    return reply->second;
  }

  FakeEnv env_;
  std::string project_;
  std::unique_ptr<crypto::EncryptingStore> store_;
};

TEST_F(EncryptingFirestoreTest, RoundTripStoresNoPlaintextInTheDocument) {
  SealedCheckpoint one = SealedWithMarker("agent-f", 1);
  ASSERT_TRUE(store_->Put(one, {}).ok());
  auto latest = store_->GetLatestVerified("agent-f");
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->checkpoint, one.doc);
  EXPECT_EQ(*store_->GetById("agent-f", one.doc.checkpoint_id), one.doc);

  std::string raw = RawDocument("agent-f", one.doc.checkpoint_id);
  EXPECT_EQ(raw.find(kSecretMarker), std::string::npos);
  EXPECT_EQ(raw.find("contextSummary"), std::string::npos);
  json fields = json::parse(raw)["fields"];
  EXPECT_EQ(fields["schemaVersion"]["integerValue"], "2");
  EXPECT_EQ(fields["encryptedContextSummary"]["mapValue"]["fields"]["keyId"]["stringValue"],
            KeyFromSeed('b').id);
}

TEST_F(EncryptingFirestoreTest, RotatedAndTamperedCheckpointsOnFirestore) {
  // Written under the old key A by an earlier configuration.
  SealedCheckpoint under_a = SealedWithMarker("agent-f", 1);
  auto stored_a = crypto::EncryptCheckpoint(under_a, KeyFromSeed('a'), &env_);
  ASSERT_TRUE(stored_a.ok());
  ASSERT_TRUE(store_->inner()->Put(*stored_a, {}).ok());
  // A ciphertext moved onto sequence 2 with its store-level hash recomputed.
  Checkpoint moved = stored_a->doc;
  moved.sequence_number = 2;
  moved.checkpoint_id = MakeCheckpoint("agent-f", 2).checkpoint_id;
  auto resealed = Seal(moved);
  ASSERT_TRUE(resealed.ok());
  ASSERT_TRUE(store_->inner()->Put(*resealed, {}).ok());

  EXPECT_EQ(*store_->GetBySequence("agent-f", 1), under_a.doc);
  EXPECT_EQ(store_->GetBySequence("agent-f", 2).status().code(), StatusCode::kDataLoss);
  auto latest = store_->GetLatestVerified("agent-f");
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->checkpoint, under_a.doc);
  ASSERT_EQ(latest->skipped.size(), 1u);
  EXPECT_NE(latest->skipped[0].reason.find("decryption failed"), std::string::npos);

  // New writes use B.
  SealedCheckpoint three = SealedWithMarker("agent-f", 3);
  ASSERT_TRUE(store_->Put(three, {}).ok());
  std::string raw = RawDocument("agent-f", three.doc.checkpoint_id);
  EXPECT_NE(raw.find(KeyFromSeed('b').id), std::string::npos);
  EXPECT_EQ(store_->GetLatestVerified("agent-f")->checkpoint, three.doc);
}

}  // namespace
}  // namespace agentckpt::testing
