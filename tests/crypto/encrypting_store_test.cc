// EncryptingStore in front of the embedded SQLite store (real database files in a TempDir).
#include "crypto/encrypting_store.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/env.h"
#include "common/fake_env.h"
#include "crypto/summary_cipher.h"
#include "tests/crypto/crypto_test_util.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

using crypto::EncryptingStore;
using crypto::Keyring;
using crypto::WrapStoreForEncryption;

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class EncryptingStoreTest : public ::testing::Test {
 protected:
  std::string Url() const { return "sqlite://" + dir_.File("checkpoints.db"); }
  std::unique_ptr<CheckpointStore> OpenInner() {
    auto store = OpenStore(Url());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return std::move(store).value();
  }
  std::unique_ptr<EncryptingStore> Open(std::optional<Keyring> ring) {
    return std::make_unique<EncryptingStore>(OpenInner(), std::move(ring), &env_);
  }
  // Every byte SQLite keeps for the store: the database file and its write-ahead log.
  std::string StoredBytes() {
    return ReadAll(dir_.File("checkpoints.db")) + ReadAll(dir_.File("checkpoints.db-wal"));
  }
  std::string KeyFile(char seed) {
    std::string path = dir_.File(std::string("key-") + seed);
    WriteTextFile(path, HexKey(seed) + "\n");
    return path;
  }

  TempDir dir_;
  FakeEnv env_;
};

TEST_F(EncryptingStoreTest, RoundTripOnSqliteStoresNoPlaintext) {
  auto store = Open(Keyring(KeyFromSeed('a'), {}));
  SealedCheckpoint one = SealedWithMarker("agent-e", 1);
  SealedCheckpoint two = SealedWithMarker("agent-e", 2);
  ASSERT_TRUE(store->Put(one, {}).ok());
  ASSERT_TRUE(store->Put(two, {}).ok());

  auto latest = store->GetLatestVerified("agent-e");
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->checkpoint, two.doc);
  EXPECT_TRUE(latest->skipped.empty());
  EXPECT_EQ(*store->GetById("agent-e", one.doc.checkpoint_id), one.doc);
  EXPECT_EQ(*store->GetBySequence("agent-e", 1), one.doc);
  // The inner store holds the encrypted form.
  auto raw = store->inner()->GetBySequence("agent-e", 2);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->schema_version, kEncryptedSchemaVersion);
  EXPECT_EQ(raw->encrypted_context_summary->plaintext_sha256, two.doc.content_sha256);
  store.reset();
  EXPECT_EQ(StoredBytes().find(kSecretMarker), std::string::npos);
}

TEST_F(EncryptingStoreTest, WithoutEncryptionThePlaintextIsInTheFile) {
  // The control for the test above: the marker is findable when nothing encrypts it.
  auto store = OpenInner();
  ASSERT_TRUE(store->Put(SealedWithMarker("agent-e", 1), {}).ok());
  store.reset();
  EXPECT_NE(StoredBytes().find(kSecretMarker), std::string::npos);
}

TEST_F(EncryptingStoreTest, GuardWithoutKeyStoresPlaintextByteForByte) {
  SealedCheckpoint one = SealedWithMarker("agent-e", 1);
  {
    auto guard = Open(std::nullopt);
    ASSERT_TRUE(guard->Put(one, {}).ok());
    EXPECT_EQ(*guard->GetBySequence("agent-e", 1), one.doc);
  }
  auto inner = OpenInner();
  auto raw = inner->GetBySequence("agent-e", 1);
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(*raw, one.doc);
  EXPECT_EQ(inner->List("agent-e", 1)->front().content_sha256, one.doc.content_sha256);
}

TEST_F(EncryptingStoreTest, ExistingPlaintextCheckpointsStillRead) {
  SealedCheckpoint old = SealedWithMarker("agent-e", 1);
  ASSERT_TRUE(OpenInner()->Put(old, {}).ok());
  auto store = Open(Keyring(KeyFromSeed('a'), {}));
  SealedCheckpoint fresh = SealedWithMarker("agent-e", 2);
  ASSERT_TRUE(store->Put(fresh, {}).ok());
  EXPECT_EQ(*store->GetBySequence("agent-e", 1), old.doc);
  EXPECT_EQ(store->GetLatestVerified("agent-e")->checkpoint, fresh.doc);
}

// Puts a tampered copy of `plain` straight into the inner store, its store-level hash
// recomputed, as someone with write access to the database could.
void PutTampered(CheckpointStore* inner, const SealedCheckpoint& stored_ok,
                 const std::function<void(Checkpoint*)>& change) {
  Checkpoint doc = stored_ok.doc;
  change(&doc);
  auto resealed = Seal(doc);
  ASSERT_TRUE(resealed.ok()) << resealed.status().ToString();
  ASSERT_TRUE(inner->Put(*resealed, {}).ok());
}

TEST_F(EncryptingStoreTest, TamperedCheckpointsAreDataLossAndSkippedForThePrevious) {
  auto store = Open(Keyring(KeyFromSeed('a'), {}));
  SealedCheckpoint good = SealedWithMarker("agent-e", 1);
  ASSERT_TRUE(store->Put(good, {}).ok());
  // Sequence 2: a flipped ciphertext byte. 3: a changed nonce. 4: the ciphertext of 3 moved
  // onto another checkpoint id and sequence (AAD).
  auto enc = [&](int64_t seq) {
    auto s = crypto::EncryptCheckpoint(SealedWithMarker("agent-e", seq), KeyFromSeed('a'), &env_);
    EXPECT_TRUE(s.ok());
    return *s;
  };
  SealedCheckpoint two = enc(2), three = enc(3);
  PutTampered(store->inner(), two, [](Checkpoint* d) {
    std::string& c = d->encrypted_context_summary->ciphertext;
    c[10] = c[10] == 'A' ? 'B' : 'A';
  });
  PutTampered(store->inner(), three, [](Checkpoint* d) {
    std::string& n = d->encrypted_context_summary->nonce;
    n[0] = n[0] == 'A' ? 'B' : 'A';
  });
  Checkpoint four_id = MakeCheckpoint("agent-e", 4);
  PutTampered(store->inner(), three, [&](Checkpoint* d) {
    d->sequence_number = 4;
    d->checkpoint_id = four_id.checkpoint_id;
  });

  for (int64_t seq = 2; seq <= 4; ++seq) {
    auto got = store->GetBySequence("agent-e", seq);
    ASSERT_FALSE(got.ok()) << seq;
    EXPECT_EQ(got.status().code(), StatusCode::kDataLoss);
    EXPECT_EQ(got.status().message().rfind("decryption failed: authentication failed", 0), 0u)
        << got.status().message();
  }
  EXPECT_EQ(store->GetById("agent-e", four_id.checkpoint_id).status().code(),
            StatusCode::kDataLoss);

  auto latest = store->GetLatestVerified("agent-e");
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->checkpoint, good.doc);
  ASSERT_EQ(latest->skipped.size(), 3u);
  EXPECT_EQ(latest->skipped[0].sequence_number, 4);
  EXPECT_EQ(latest->skipped[0].checkpoint_id, four_id.checkpoint_id);
  EXPECT_EQ(latest->skipped[1].sequence_number, 3);
  EXPECT_EQ(latest->skipped[2].sequence_number, 2);
  for (const auto& s : latest->skipped) {
    EXPECT_NE(s.reason.find("DATA_LOSS"), std::string::npos) << s.reason;
    EXPECT_NE(s.reason.find("decryption failed"), std::string::npos) << s.reason;
  }
}

TEST_F(EncryptingStoreTest, StoreLevelCorruptionIsStillReportedByTheInnerStore) {
  auto store = Open(Keyring(KeyFromSeed('a'), {}));
  SealedCheckpoint good = SealedWithMarker("agent-e", 1);
  ASSERT_TRUE(store->Put(good, {}).ok());
  auto stored = crypto::EncryptCheckpoint(SealedWithMarker("agent-e", 2), KeyFromSeed('a'), &env_);
  ASSERT_TRUE(stored.ok());
  SealedCheckpoint broken = *stored;
  broken.canonical[broken.canonical.find("\"nonce\":\"") + 9] ^= 0x01;  // hash no longer matches
  ASSERT_TRUE(store->inner()->Put(broken, {}).ok());
  auto latest = store->GetLatestVerified("agent-e");
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->checkpoint, good.doc);
  ASSERT_EQ(latest->skipped.size(), 1u);
  EXPECT_NE(latest->skipped[0].reason.find("contentSha256 mismatch"), std::string::npos);
}

TEST_F(EncryptingStoreTest, RotationReadsOldAndNewWritesUseTheNewKey) {
  SealedCheckpoint under_a = SealedWithMarker("agent-e", 1);
  ASSERT_TRUE(Open(Keyring(KeyFromSeed('a'), {}))->Put(under_a, {}).ok());

  auto rotated = Open(Keyring(KeyFromSeed('b'), {KeyFromSeed('a')}));
  SealedCheckpoint under_b = SealedWithMarker("agent-e", 2);
  ASSERT_TRUE(rotated->Put(under_b, {}).ok());
  EXPECT_EQ(*rotated->GetBySequence("agent-e", 1), under_a.doc);
  EXPECT_EQ(*rotated->GetBySequence("agent-e", 2), under_b.doc);
  EXPECT_EQ(rotated->inner()->GetBySequence("agent-e", 1)->encrypted_context_summary->key_id,
            KeyFromSeed('a').id);
  EXPECT_EQ(rotated->inner()->GetBySequence("agent-e", 2)->encrypted_context_summary->key_id,
            KeyFromSeed('b').id);

  // Once A is retired, what it wrote is a clear DataLoss and the newest (under B) still reads.
  auto retired = Open(Keyring(KeyFromSeed('b'), {}));
  auto old = retired->GetBySequence("agent-e", 1);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(old.status().message().find("key id " + KeyFromSeed('a').id + " is not in the keyring"),
            std::string::npos)
      << old.status().message();
  EXPECT_EQ(retired->GetLatestVerified("agent-e")->checkpoint, under_b.doc);
}

TEST_F(EncryptingStoreTest, WrongKeyMakesEveryCheckpointDataLossAndLatestNotFound) {
  ASSERT_TRUE(Open(Keyring(KeyFromSeed('a'), {}))->Put(SealedWithMarker("agent-e", 1), {}).ok());
  ASSERT_TRUE(Open(Keyring(KeyFromSeed('a'), {}))->Put(SealedWithMarker("agent-e", 2), {}).ok());
  auto wrong = Open(Keyring(KeyFromSeed('c'), {}));
  auto latest = wrong->GetLatestVerified("agent-e");
  ASSERT_FALSE(latest.ok());
  EXPECT_EQ(latest.status().code(), StatusCode::kNotFound);
  EXPECT_NE(latest.status().message().find("key id " + KeyFromSeed('a').id), std::string::npos)
      << latest.status().message();
}

TEST_F(EncryptingStoreTest, GuardNeverReadsAnEncryptedSummaryAsEmpty) {
  SealedCheckpoint plain = SealedWithMarker("agent-e", 1);
  ASSERT_TRUE(OpenInner()->Put(plain, {}).ok());
  ASSERT_TRUE(Open(Keyring(KeyFromSeed('a'), {}))->Put(SealedWithMarker("agent-e", 2), {}).ok());
  auto guard = Open(std::nullopt);
  auto got = guard->GetBySequence("agent-e", 2);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(got.status().message().find("no encryption key is configured"), std::string::npos);
  // The newest verified checkpoint is encrypted: the older plaintext one is not the agent's
  // state, so the guard refuses rather than fall back to it.
  auto latest = guard->GetLatestVerified("agent-e");
  ASSERT_FALSE(latest.ok());
  EXPECT_TRUE(crypto::IsMissingKeyRefusal(latest.status())) << latest.status().ToString();
  EXPECT_NE(latest.status().message().find("agent-e (newest: sequence 2, key id " +
                                           KeyFromSeed('a').id + ")"),
            std::string::npos)
      << latest.status().message();
  // The plaintext one still reads by its sequence.
  auto first = guard->GetBySequence("agent-e", 1);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, plain.doc);
}

TEST_F(EncryptingStoreTest, GuardReadsPlaintextLatestAndItsRefusalIsNotOtherErrors) {
  auto guard = Open(std::nullopt);
  EXPECT_EQ(guard->GetLatestVerified("agent-e").status().code(), StatusCode::kNotFound);
  SealedCheckpoint plain = SealedWithMarker("agent-e", 1);
  ASSERT_TRUE(guard->Put(plain, {}).ok());
  auto latest = guard->GetLatestVerified("agent-e");
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->checkpoint, plain.doc);
  EXPECT_FALSE(crypto::IsMissingKeyRefusal(FailedPreconditionError("lease held by another")));
  EXPECT_FALSE(crypto::IsMissingKeyRefusal(
      InvalidArgumentError("CKPT_ENCRYPTION_KEY_FILE: the store holds encrypted checkpoints")));
}

TEST_F(EncryptingStoreTest, WrapRefusesToStartWithoutKeyWhenEncryptedCheckpointsExist) {
  ASSERT_TRUE(Open(Keyring(KeyFromSeed('a'), {}))->Put(SealedWithMarker("agent-e", 1), {}).ok());
  auto wrapped = WrapStoreForEncryption(OpenInner(), "agent-e", "", "", &env_);
  ASSERT_FALSE(wrapped.ok());
  EXPECT_EQ(wrapped.status().code(), StatusCode::kInvalidArgument);  // exit code 2
  EXPECT_EQ(wrapped.status().message().rfind("CKPT_ENCRYPTION_KEY_FILE: the store holds "
                                             "encrypted checkpoints of agent agent-e",
                                             0),
            0u)
      << wrapped.status().message();
  EXPECT_NE(wrapped.status().message().find(KeyFromSeed('a').id), std::string::npos);
  // Another agent of the same store, with nothing encrypted, starts.
  EXPECT_TRUE(WrapStoreForEncryption(OpenInner(), "agent-f", "", "", &env_).ok());
}

TEST_F(EncryptingStoreTest, WrapWithoutCheckNowReadsNothingAndTheGuardRefusesAtTheFirstLoad) {
  ASSERT_TRUE(Open(Keyring(KeyFromSeed('a'), {}))->Put(SealedWithMarker("agent-e", 1), {}).ok());
  auto wrapped = WrapStoreForEncryption(OpenInner(), "agent-e", "", "", &env_, false);
  ASSERT_TRUE(wrapped.ok()) << wrapped.status().ToString();
  auto latest = (*wrapped)->GetLatestVerified("agent-e");
  ASSERT_FALSE(latest.ok());
  EXPECT_TRUE(crypto::IsMissingKeyRefusal(latest.status())) << latest.status().ToString();
  // The same words as the refusal at open (docs/troubleshooting.md quotes them).
  auto at_open = WrapStoreForEncryption(OpenInner(), "agent-e", "", "", &env_);
  ASSERT_FALSE(at_open.ok());
  EXPECT_EQ(at_open.status().message(), latest.status().message());
}

TEST_F(EncryptingStoreTest, WrapWithKeyFilesEncryptsAndBadSettingsAreClearErrors) {
  auto wrapped =
      WrapStoreForEncryption(OpenInner(), "agent-e", KeyFile('b'), KeyFile('a'), Env::Default());
  ASSERT_TRUE(wrapped.ok()) << wrapped.status().ToString();
  SealedCheckpoint one = SealedWithMarker("agent-e", 1);
  ASSERT_TRUE((*wrapped)->Put(one, {}).ok());
  EXPECT_EQ((*wrapped)->GetLatestVerified("agent-e")->checkpoint, one.doc);
  EXPECT_EQ(OpenInner()->GetBySequence("agent-e", 1)->encrypted_context_summary->key_id,
            KeyFromSeed('b').id);

  auto unreadable =
      WrapStoreForEncryption(OpenInner(), "agent-e", dir_.File("nope"), "", Env::Default());
  EXPECT_EQ(unreadable.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unreadable.status().message().rfind("CKPT_ENCRYPTION_KEY_FILE: ", 0), 0u);
  auto old_only = WrapStoreForEncryption(OpenInner(), "agent-e", "", KeyFile('a'), Env::Default());
  EXPECT_EQ(old_only.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(old_only.status().message().rfind("CKPT_ENCRYPTION_OLD_KEY_FILES: ", 0), 0u);
}

}  // namespace
}  // namespace agentckpt::testing
