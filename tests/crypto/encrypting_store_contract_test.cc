// The CheckpointStore contract, held against EncryptingStore in front of the SQLite store: the
// decorator must be indistinguishable from the store it wraps.
#include <memory>
#include <string>

#include "common/env.h"
#include "crypto/encrypting_store.h"
#include "tests/crypto/crypto_test_util.h"
#include "tests/store/raw_sqlite.h"
#include "tests/store/store_contract.h"

namespace agentckpt::testing {
namespace {

std::unique_ptr<CheckpointStore> OpenEncryptedSqlite(const std::string& temp_dir) {
  auto store = OpenStore("sqlite://" + temp_dir + "/db/checkpoints.db");
  if (!store.ok()) {
    ADD_FAILURE() << "cannot open the sqlite store: " << store.status().ToString();
    return nullptr;
  }
  return std::make_unique<crypto::EncryptingStore>(
      std::move(store).value(), crypto::Keyring(KeyFromSeed('a'), {KeyFromSeed('b')}),
      Env::Default());
}

void DamageSqliteSequence(const std::string& temp_dir, const std::string& /*agent*/,
                          const std::string& checkpoint_id) {
  DamageStoredSequence(temp_dir + "/db/checkpoints.db", checkpoint_id);
}

INSTANTIATE_TEST_SUITE_P(EncryptedSqlite, StoreContractTest,
                         ::testing::Values(StoreFactory{"encrypted_sqlite", OpenEncryptedSqlite,
                                                        OpenEncryptedSqlite, DamageSqliteSequence}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace agentckpt::testing
