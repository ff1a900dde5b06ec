// NatsLink against a real nats-server that stops reading: a publish must not hold the calling
// thread once the socket buffers are full, and the link must come back when the server does.
#include "nats/nats_link.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "observability/metrics.h"
#include "tests/support/nats_server.h"

namespace agentckpt {
namespace {

using testing::NatsServerProcess;

// Polls `done` every 20 ms, at most `attempts` times.
template <typename F>
bool Eventually(F done, int attempts = 1000) {
  for (int i = 0; i < attempts; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(NatsLinkTest, PublishToAServerThatStopsReadingFailsInsteadOfBlockingAndTheLinkRecovers) {
  NatsServerProcess nats;
  Metrics metrics;
  NatsLinkOptions o;
  o.url = nats.url();
  o.reconnect_wait_ms = 100;
  o.write_deadline_ms = 300;
  auto link = NatsLink::Connect(o, &metrics);
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  NatsLink* l = link->get();
  ASSERT_TRUE(l->Connected());
  ASSERT_TRUE(l->Flush(5000).ok());

  ASSERT_EQ(::kill(nats.pid(), SIGSTOP), 0);
  // 64 KiB events until one fails: loopback socket buffers take a few MiB, so a server that does
  // not read makes a write wait. At most 64 MiB are offered; more than the buffers can hold.
  const std::string event(64 << 10, 'x');
  auto publishing = std::async(std::launch::async, [l, &event] {
    for (int i = 0; i < 1024; ++i) {
      Status s = l->Publish("test.event", "agentckpt.test.flood", event);
      if (!s.ok()) return s;
    }
    return OkStatus();
  });
  // A hang detector, not a speed bound: the deadline is 0.3 s, the guard 60 s.
  const bool finished = publishing.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  ASSERT_EQ(::kill(nats.pid(), SIGCONT), 0);
  ASSERT_TRUE(finished) << "a publish to a stopped server is still blocked after 60 s";
  Status failed = publishing.get();
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable) << failed.ToString();
  EXPECT_NE(metrics.Render().find("agentckpt_nats_events_dropped_total{event=\"test.event\"}"),
            std::string::npos);

  // The server reads again: the link reconnects and delivers.
  ASSERT_TRUE(Eventually([l] { return l->Connected(); }))
      << "the link did not reconnect after the server resumed";
  ASSERT_TRUE(Eventually([l] {
    return l->Publish("test.event", "agentckpt.test.after", "ok").ok() && l->Flush(1000).ok();
  }));
  l->Close();
}

}  // namespace
}  // namespace agentckpt
