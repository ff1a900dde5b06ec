// The CheckpointStore contract, held against the embedded SQLite store (opened by URL, as the
// sidecar does).
#include <memory>
#include <string>

#include "store/checkpoint_store.h"
#include "tests/store/raw_sqlite.h"
#include "tests/store/store_contract.h"

namespace agentckpt::testing {
namespace {

std::unique_ptr<CheckpointStore> OpenSqliteStore(const std::string& temp_dir) {
  auto store = OpenStore("sqlite://" + temp_dir + "/db/checkpoints.db");
  if (!store.ok()) {
    ADD_FAILURE() << "cannot open the sqlite store: " << store.status().ToString();
    return nullptr;
  }
  return std::move(store).value();
}

void DamageSqliteSequence(const std::string& temp_dir, const std::string& /*agent*/,
                          const std::string& checkpoint_id) {
  DamageStoredSequence(temp_dir + "/db/checkpoints.db", checkpoint_id);
}

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreContractTest,
                         ::testing::Values(StoreFactory{"sqlite", OpenSqliteStore, OpenSqliteStore,
                                                        DamageSqliteSequence}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace agentckpt::testing
