// The CheckpointStore contract, held against JetStreamStore on a real 3-node nats-server
// cluster with R3 streams (tests/support/nats_cluster.h). Every test gets its own stream
// prefix, so its store starts empty.
#include <atomic>
#include <memory>
#include <string>

#include "tests/store/jetstream_test_util.h"
#include "tests/store/store_contract.h"
#include "tests/support/nats_cluster.h"

namespace agentckpt::testing {
namespace {

NatsClusterProcess* g_cluster = nullptr;

class ClusterEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { g_cluster = new NatsClusterProcess(); }
  void TearDown() override {
    delete g_cluster;
    g_cluster = nullptr;
  }
};

const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new ClusterEnvironment);

std::string& LastPrefix() {
  static std::string prefix;
  return prefix;
}

std::unique_ptr<CheckpointStore> OpenClusterStore(const std::string& /*temp_dir*/) {
  static std::atomic<int> next{0};
  LastPrefix() = "R" + std::to_string(next.fetch_add(1));
  return OpenJetStreamPrefix(g_cluster->url(), LastPrefix(), 3);
}

std::unique_ptr<CheckpointStore> ReopenClusterStore(const std::string& /*temp_dir*/) {
  return OpenJetStreamPrefix(g_cluster->url(), LastPrefix(), 3);
}

void DamageClusterSequence(const std::string& /*temp_dir*/, const std::string& agent,
              const std::string& checkpoint_id) {
  auto store = OpenJetStreamPrefix(g_cluster->url(), LastPrefix(), 3);
  DamageJetStreamDocument(store.get(), agent, checkpoint_id);
}

INSTANTIATE_TEST_SUITE_P(JetStreamR3, StoreContractTest,
                         ::testing::Values(StoreFactory{"jetstream_r3", OpenClusterStore,
                                                        ReopenClusterStore,
                                                        DamageClusterSequence}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace agentckpt::testing
