// The CheckpointStore contract, held against JetStreamStore on a real `nats-server -js` (one
// server, R1; tests/store/jetstream_cluster_test.cc runs on three). Every test gets its own
// stream prefix, so its store starts empty.
#include <atomic>
#include <memory>
#include <string>

#include "store/jetstream/jetstream_store.h"
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

std::unique_ptr<JetStreamStore> OpenPrefix(const std::string& prefix) {
  JetStreamStoreOptions options;
  options.api.servers = g_server->url();
  options.prefix = prefix;
  options.create = true;
  auto store = JetStreamStore::Open(std::move(options));
  if (!store.ok()) {
    ADD_FAILURE() << store.status().ToString();
    return nullptr;
  }
  return std::move(store).value();
}

std::unique_ptr<CheckpointStore> OpenJetStreamStore(const std::string& /*temp_dir*/) {
  static std::atomic<int> next{0};
  LastPrefix() = "C" + std::to_string(next.fetch_add(1));
  return OpenPrefix(LastPrefix());
}

std::unique_ptr<CheckpointStore> ReopenJetStreamStore(const std::string& /*temp_dir*/) {
  return OpenPrefix(LastPrefix());
}

// Rewrites the stored document with its sequenceNumber as a string (the subject keeps one
// message, so the publish replaces it), behind the store's back.
void DamageJetStreamSequence(const std::string& /*temp_dir*/, const std::string& agent,
                             const std::string& checkpoint_id) {
  auto store = OpenPrefix(LastPrefix());
  ASSERT_NE(store, nullptr);
  std::string sha;
  auto listed = store->List(agent, 1000);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  for (const CheckpointInfo& info : *listed) {
    if (info.checkpoint_id == checkpoint_id) sha = info.content_sha256;
  }
  ASSERT_FALSE(sha.empty()) << checkpoint_id << " is not listed";
  const std::string subject = store->CheckpointSubject(agent, checkpoint_id, sha);
  auto msg = store->api()->GetLast(store->CheckpointsStream(), subject);
  ASSERT_TRUE(msg.ok() && msg->has_value()) << msg.status().ToString();
  std::string doc = (*msg)->data;
  const std::string key = "\"sequenceNumber\":";
  size_t at = doc.find(key);
  ASSERT_NE(at, std::string::npos) << doc;
  size_t end = doc.find_first_of(",}", at + key.size());
  doc.replace(at + key.size(), end - at - key.size(), "\"not a number\"");
  auto put = store->api()->Publish(subject, doc, {}, "damage-" + checkpoint_id, std::nullopt);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(JetStream, StoreContractTest,
                         ::testing::Values(StoreFactory{"jetstream", OpenJetStreamStore,
                                                        ReopenJetStreamStore,
                                                        DamageJetStreamSequence}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace agentckpt::testing
