// The reference agent's inbox (examples/reference_agent/agent_inbox.h) on a real nats-server:
// binding to its durable is tried again until the deadline, so an agent started while the
// cluster cannot answer for the consumer (a leader being elected) binds once it can.
#include "examples/reference_agent/agent_inbox.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <future>

#include "nats/nats_connect.h"
#include "tests/support/nats_server.h"

namespace agentckpt::testing {
namespace {

constexpr char kStream[] = "INBOX_BIND";
constexpr char kAgent[] = "bind-agent";

TEST(AgentInboxTest, BindsOnceTheDurableCanBeFoundAfterAFailedFirstTry) {
  NatsServerProcess nats;
  auto watcher = ConnectNatsUrl(nats.url());
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  // Every consumer lookup the bind makes passes here too (a request is an ordinary message).
  natsSubscription* lookups = nullptr;
  ASSERT_EQ(natsConnection_SubscribeSync(&lookups, watcher->get(), "$JS.API.CONSUMER.INFO.>"),
            NATS_OK);
  ASSERT_EQ(natsConnection_Flush(watcher->get()), NATS_OK);

  auto opened = std::async(std::launch::async, [&] {
    return reference_agent::AgentInbox::Open(nats.url(), kStream, kAgent, 20000);
  });
  // The first try finds neither the stream nor the durable.
  natsMsg* lookup = nullptr;
  ASSERT_EQ(natsSubscription_NextMsg(&lookup, lookups, 10000), NATS_OK)
      << "the bind made no consumer lookup";
  EXPECT_NE(std::string(natsMsg_GetSubject(lookup)).find(kAgent), std::string::npos)
      << natsMsg_GetSubject(lookup);
  natsMsg_Destroy(lookup);
  ASSERT_EQ(opened.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "Open gave up after one failed bind";

  ASSERT_TRUE(reference_agent::SetupInbox(watcher->get(), kStream, kAgent, 3000).ok());
  auto inbox = opened.get();
  ASSERT_TRUE(inbox.ok()) << inbox.status().ToString();

  // Bound to that durable: a message on the agent's inbox subject is fetched through it.
  jsCtx* js = nullptr;
  ASSERT_EQ(natsConnection_JetStream(&js, watcher->get(), nullptr), NATS_OK);
  jsPubAck* ack = nullptr;
  const std::string subject = reference_agent::InboxSubject(kAgent);
  ASSERT_EQ(js_Publish(&ack, js, subject.c_str(), "task-1", 6, nullptr, nullptr), NATS_OK);
  jsPubAck_Destroy(ack);
  jsCtx_Destroy(js);
  auto batch = (*inbox)->Fetch(1, 5000);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_EQ(batch->size(), 1u);
  EXPECT_EQ((*batch)[0].data, "task-1");
  EXPECT_TRUE((*inbox)->Ack((*batch)[0]).ok());
  natsSubscription_Destroy(lookups);
}

TEST(AgentInboxTest, ADurableThatNeverAppearsIsReportedAtTheDeadline) {
  NatsServerProcess nats;
  auto inbox = reference_agent::AgentInbox::Open(nats.url(), kStream, kAgent, 300);
  ASSERT_FALSE(inbox.ok());
  EXPECT_NE(inbox.status().message().find("bind to durable bind-agent"), std::string::npos)
      << inbox.status().ToString();
}

}  // namespace
}  // namespace agentckpt::testing
