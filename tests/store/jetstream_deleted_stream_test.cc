// A stream deleted under an open JetStream store: every read and write answers kUnavailable with
// a message naming the stream and the repair, never kNotFound, which a restore would take for "no
// checkpoint" and start the agent cold.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <memory>
#include <string>
#include <vector>

#include "nats/nats_connect.h"
#include "store/jetstream/jetstream_store.h"
#include "tests/store/store_test_util.h"
#include "tests/support/journal_chain.h"
#include "tests/support/nats_server.h"

namespace agentckpt::testing {
namespace {

constexpr char kAgent[] = "agent-js-deleted";

// The store with its streams created, and calls that give up after 1 s (a publish to a deleted
// stream finds no responder, which the store tries again until retry_ms).
std::unique_ptr<JetStreamStore> OpenStore(const std::string& url) {
  JetStreamStoreOptions options;
  options.api.servers = url;
  options.api.retry_ms = 1000;
  options.prefix = "GONE";
  options.create = true;
  auto store = JetStreamStore::Open(std::move(options));
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

void DeleteStreamBehindTheStore(const std::string& url, const std::string& stream) {
  auto nc = ConnectNatsUrl(url);
  ASSERT_TRUE(nc.ok()) << nc.status().ToString();
  jsCtx* js = nullptr;
  ASSERT_EQ(natsConnection_JetStream(&js, nc->get(), nullptr), NATS_OK);
  EXPECT_EQ(js_DeleteStream(js, stream.c_str(), nullptr, nullptr), NATS_OK);
  jsCtx_Destroy(js);
}

void ExpectStreamGone(const Status& s, const std::string& stream) {
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find(stream), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("setup-store"), std::string::npos) << s.ToString();
}

TEST(JetStreamDeletedStreamTest, TheAgentRecordStreamGoneIsUnavailableNotNoCheckpoint) {
  NatsServerProcess nats;
  std::unique_ptr<JetStreamStore> store = OpenStore(nats.url());
  ASSERT_NE(store, nullptr);
  STORE_ASSERT_OK(store->Put(SealedAt(kAgent, 1), PutOptions()));
  STORE_ASSERT_OK(store->GetLatestVerified(kAgent));

  DeleteStreamBehindTheStore(nats.url(), store->AgentsStream());
  ExpectStreamGone(store->GetLatestVerified(kAgent).status(), store->AgentsStream());
  ExpectStreamGone(store->List(kAgent, 10).status(), store->AgentsStream());
  // A write publishes to the record's subject, which no stream takes any more.
  const Status put = store->Put(SealedAt(kAgent, 2), PutOptions()).status();
  EXPECT_EQ(put.code(), StatusCode::kUnavailable) << put.ToString();
  EXPECT_NE(put.message().find("setup-store"), std::string::npos) << put.ToString();
}

TEST(JetStreamDeletedStreamTest, TheJournalStreamGoneIsUnavailableNotAnEmptyJournal) {
  NatsServerProcess nats;
  std::unique_ptr<JetStreamStore> store = OpenStore(nats.url());
  ASSERT_NE(store, nullptr);
  const std::vector<JournalEntry> first = JournalChain(kAgent, 1, 3, 0);
  STORE_ASSERT_OK(store->AppendJournal(kAgent, first, std::nullopt));

  DeleteStreamBehindTheStore(nats.url(), store->JournalStream());
  ExpectStreamGone(store->ReadJournal(kAgent, 0).status(), store->JournalStream());
  // The journal's head is cached from the append: the next append is a publish, which no
  // stream takes any more.
  EXPECT_EQ(
      store->AppendJournal(kAgent, JournalChain(kAgent, 4, 1, 0, first.back().sha256), std::nullopt)
          .code(),
      StatusCode::kUnavailable);
}

}  // namespace
}  // namespace agentckpt::testing
