// StoreContractTest: the behaviour every CheckpointStore implementation must show (see
// store/checkpoint_store.h), as a value-parameterised GoogleTest suite.
//
// To hold a backend to the contract, add tests/store/store_contract.cc to the SOURCES of the
// backend's own test executable (do NOT link it from a static library: the linker would drop the
// object file and with it every TEST_P registration) and instantiate the suite there:
//
//   INSTANTIATE_TEST_SUITE_P(Sqlite, StoreContractTest,
//                            ::testing::Values(StoreFactory{"sqlite", MakeSqliteStore}),
//                            [](const auto& info) { return info.param.name; });
//
// `make` is called once per test with a fresh temporary directory (removed after the test) and
// must return an EMPTY store that no other test shares: DeleteExpired acts on every agent of
// the store, and the tests count exactly what was deleted (for a remote backend, e.g. derive a
// distinct project or database id per call). Returning null fails the test.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "store/checkpoint_store.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {

struct StoreFactory {
  std::string name;  // used as the instantiation's test-name suffix: [A-Za-z0-9_] only
  std::function<std::unique_ptr<CheckpointStore>(const std::string& temp_dir)> make;
  // Optional: opens another handle (its own connection and caches, as a second process would
  // have) on the store the last `make` returned. The lease tests use it for the stale writer;
  // when unset they use the same handle.
  std::function<std::unique_ptr<CheckpointStore>(const std::string& temp_dir)> reopen;
  // Damages the stored document of `checkpoint_id` (of `agent`) behind the store's back, the
  // backend's own way, so that its sequenceNumber no longer parses as an integer. The damaged-
  // document tests use it.
  std::function<void(const std::string& temp_dir, const std::string& agent,
                     const std::string& checkpoint_id)>
      damage_sequence;
};

inline void PrintTo(const StoreFactory& factory, std::ostream* os) { *os << factory.name; }

// The fixture: a fresh store per test, in a fresh temporary directory.
class StoreContractTest : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override;
  void TearDown() override;

  CheckpointStore& store() { return *store_; }
  // A second handle on the same store (see StoreFactory::reopen), opened on first use.
  CheckpointStore& other_handle();

 public:
  // Damages a stored document (StoreFactory::damage_sequence).
  void Damage(const std::string& agent, const std::string& checkpoint_id) {
    ASSERT_TRUE(GetParam().damage_sequence) << GetParam().name << " has no damage hook";
    GetParam().damage_sequence(dir_->path(), agent, checkpoint_id);
  }

 protected:
 private:
  std::unique_ptr<TempDir> dir_;  // declared first: outlives the store
  std::unique_ptr<CheckpointStore> store_;
  std::unique_ptr<CheckpointStore> other_;
};

}  // namespace agentckpt::testing
