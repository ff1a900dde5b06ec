// ConfirmedPublisher against a real nats-server that dies before it reads an event: the server is
// stopped (SIGSTOP) while two events are written to its socket, one plain and one confirmed, then
// SIGKILLed and started again on the same port and store directory. A JetStream stream capturing
// the events' subjects is the independent record of what the server received: the plain event
// is gone (core NATS is at-most-once), the confirmed one is there, published again on the new
// connection.
#include "nats/confirmed_publisher.h"

#include <gtest/gtest.h>
#include <nats/nats.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "observability/metrics.h"
#include "tests/support/jetstream_fixture.h"
#include "tests/support/nats_server.h"

namespace agentckpt {
namespace {

using testing::JetStreamTestClient;
using testing::NatsServerProcess;

// Whether the stream holds a message on `subject` (read on a fresh connection).
StatusOr<bool> StreamHas(const std::string& url, const std::string& subject) {
  auto client = JetStreamTestClient::Connect(url);
  if (!client.ok()) return client.status();
  natsMsg* msg = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetLastMsg(&msg, (*client)->js(), "EVENTS", subject.c_str(), nullptr, &jerr);
  natsMsg_Destroy(msg);
  if (s == NATS_OK) return true;
  if (s == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr) return false;
  return UnavailableError(std::string("get last message: ") + natsStatus_GetText(s));
}

// SIGSTOPs `pid` and waits until every one of its threads is stopped: a thread busy on another
// core runs on for a moment after kill() returns, and could still read what is written next.
// Bounded: 5 s.
bool StopAndWait(pid_t pid) {
  if (::kill(pid, SIGSTOP) != 0) return false;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (int i = 0; i < 500; ++i) {
    bool all = true;
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
      std::ifstream in(task.path() / "stat");
      std::string line;
      std::getline(in, line);
      const size_t close = line.rfind(')');  // the state follows the command name
      if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'T') {
        all = false;
      }
    }
    if (!ec && all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(ConfirmedPublisherTest, AnEventWrittenToAServerThatDiesUnreadIsPublishedAgainAfterReconnect) {
  NatsServerProcess nats;
  {
    auto client = JetStreamTestClient::Connect(nats.url());
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    ASSERT_TRUE((*client)->CreateStream("EVENTS", {"agentckpt.test.>"}).ok());
  }
  Metrics metrics;
  NatsLinkOptions o;
  o.url = nats.url();
  o.reconnect_wait_ms = 100;
  auto link = NatsLink::Connect(o, &metrics);
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  ASSERT_TRUE((*link)->Flush(5000).ok());
  ConfirmedPublisherOptions po;
  po.flush_timeout_ms = 500;
  po.retry_ms = 50;
  ConfirmedPublisher confirmed(link->get(), po);
  // Before the outage: confirmed at once, and stored.
  ASSERT_TRUE(confirmed.Publish("test.event", "agentckpt.test.before", "1").ok());
  ASSERT_TRUE(confirmed.WaitConfirmed(30000));

  ASSERT_TRUE(StopAndWait(nats.pid()));
  ASSERT_TRUE((*link)->Publish("test.event", "agentckpt.test.plain", "lost").ok());
  ASSERT_TRUE(confirmed.Publish("test.event", "agentckpt.test.confirmed", "kept").ok());
  EXPECT_FALSE(confirmed.WaitConfirmed(700));  // the server reads nothing
  nats.Restart();  // SIGKILL (the unread socket data is gone with it), then the same port

  // Bounded: the link reconnects every 100 ms; the guard is 30 s.
  ASSERT_TRUE(confirmed.WaitConfirmed(30000)) << "not confirmed after the server came back";
  auto kept = StreamHas(nats.url(), "agentckpt.test.confirmed");
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_TRUE(*kept) << "the confirmed event is not on the restarted server";
  auto lost = StreamHas(nats.url(), "agentckpt.test.plain");
  ASSERT_TRUE(lost.ok()) << lost.status().ToString();
  EXPECT_FALSE(*lost) << "the plain event survived: the test did not make the server lose it";
  auto before = StreamHas(nats.url(), "agentckpt.test.before");
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_TRUE(*before);
  confirmed.Stop();
  (*link)->Close();
}

TEST(ConfirmedPublisherTest, StopGivesUpWhatIsUnconfirmedAndLaterPublishesAreNotKept) {
  NatsServerProcess nats;
  Metrics metrics;
  NatsLinkOptions o;
  o.url = nats.url();
  auto link = NatsLink::Connect(o, &metrics);
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  ConfirmedPublisherOptions po;
  po.flush_timeout_ms = 200;
  ConfirmedPublisher confirmed(link->get(), po);
  ASSERT_TRUE(StopAndWait(nats.pid()));
  ASSERT_TRUE(confirmed.Publish("test.event", "agentckpt.test.a", "1").ok());
  EXPECT_FALSE(confirmed.WaitConfirmed(300));
  confirmed.Stop();                         // bounded by one flush timeout
  EXPECT_TRUE(confirmed.WaitConfirmed(0));  // nothing kept
  ASSERT_TRUE(confirmed.Publish("test.event", "agentckpt.test.b", "2").ok());
  EXPECT_TRUE(confirmed.WaitConfirmed(0));
  ASSERT_EQ(::kill(nats.pid(), SIGCONT), 0);
  (*link)->Close();
}

}  // namespace
}  // namespace agentckpt
