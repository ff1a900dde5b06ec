// The CheckpointStore contract, held against FirestoreStore on the emulator (a real child
// process). Every test gets its own project id, so its store starts empty.
#include <atomic>
#include <memory>
#include <string>

#include "tests/firestore/emulator_process.h"
#include "tests/store/store_contract.h"

namespace agentckpt::testing {
namespace {

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

std::unique_ptr<CheckpointStore> OpenFirestoreStore(const std::string& /*temp_dir*/) {
  static std::atomic<int> next{0};
  if (g_emulator == nullptr) {
    ADD_FAILURE() << "the emulator is not running";
    return nullptr;
  }
  std::string project = "contract-" + std::to_string(next.fetch_add(1));
  LastProject() = project;
  return OpenEmulatorStore(g_emulator->host_port(), project);
}

// Another handle on the project the last OpenFirestoreStore made (tests run one at a time).
std::unique_ptr<CheckpointStore> ReopenFirestoreStore(const std::string& /*temp_dir*/) {
  if (g_emulator == nullptr || LastProject().empty()) return nullptr;
  return OpenEmulatorStore(g_emulator->host_port(), LastProject());
}

void DamageFirestoreSequence(const std::string& /*temp_dir*/, const std::string& agent,
                             const std::string& checkpoint_id) {
  DamageSnapshotSequence(g_emulator, LastProject(), agent, checkpoint_id);
}

INSTANTIATE_TEST_SUITE_P(Firestore, StoreContractTest,
                         ::testing::Values(StoreFactory{"firestore", OpenFirestoreStore,
                                                        ReopenFirestoreStore,
                                                        DamageFirestoreSequence}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace agentckpt::testing
