// The CheckpointStore contract, held against JetStreamStore on a real `nats-server -js` (one
// server, R1; tests/store/jetstream_cluster_test.cc runs on three). Every test gets its own
// stream prefix, so its store starts empty.
#include <atomic>
#include <memory>
#include <string>

#include "tests/store/jetstream_test_util.h"
#include "tests/store/store_contract.h"
#include "tests/support/nats_server.h"

namespace agentckpt::testing {
namespace {

NatsServerProcess* g_server = nullptr;

class NatsEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { g_server = new NatsServerProcess(); }
  void TearDown() override {
    delete g_server;
    g_server = nullptr;
  }
};

const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new NatsEnvironment);

std::string& LastPrefix() {
  static std::string prefix;
  return prefix;
}

std::unique_ptr<CheckpointStore> OpenJetStreamStore(const std::string& /*temp_dir*/) {
  static std::atomic<int> next{0};
  LastPrefix() = "C" + std::to_string(next.fetch_add(1));
  return OpenJetStreamPrefix(g_server->url(), LastPrefix(), 1);
}

std::unique_ptr<CheckpointStore> ReopenJetStreamStore(const std::string& /*temp_dir*/) {
  return OpenJetStreamPrefix(g_server->url(), LastPrefix(), 1);
}

void DamageJetStreamSequence(const std::string& /*temp_dir*/, const std::string& agent,
              const std::string& checkpoint_id) {
  auto store = OpenJetStreamPrefix(g_server->url(), LastPrefix(), 1);
  DamageJetStreamDocument(store.get(), agent, checkpoint_id);
}

INSTANTIATE_TEST_SUITE_P(JetStream, StoreContractTest,
                         ::testing::Values(StoreFactory{"jetstream", OpenJetStreamStore,
                                                        ReopenJetStreamStore,
                                                        DamageJetStreamSequence}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace agentckpt::testing
