// A replay reader SIGKILLed in the middle of a read leaves nothing behind for long: the server
// removes its ephemeral consumer after the inactivity threshold, and the durable is untouched.
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/support/jetstream_fixture.h"
#include "tests/support/nats_server.h"

namespace agentckpt {
namespace {

using testing::JetStreamTestClient;
using testing::NatsServerProcess;

// Polls `condition` every 20 ms until it holds or `timeout` passes.
template <typename F>
bool WaitFor(F condition, std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

TEST(JetStreamReplayCrashTest, KilledReaderLeavesNoConsumerBehind) {
  NatsServerProcess server;
  auto client_or = JetStreamTestClient::Connect(server.url());
  ASSERT_TRUE(client_or.ok()) << client_or.status().ToString();
  auto& client = *client_or;
  ASSERT_TRUE(client->CreateStream("CRASH", {"crash.inbox.>"}).ok());
  ASSERT_TRUE(client->CreateDurablePullConsumer("CRASH", "agent", "crash.inbox.>").ok());
  // Enough messages that one read takes a while, so the kill lands inside a read.
  for (int i = 0; i < 100000; ++i) {
    ASSERT_EQ(js_PublishAsync(client->js(), "crash.inbox.tasks", "0123456789abcdef", 16, nullptr),
              NATS_OK);
  }
  jsPubOptions pub_opts;
  jsPubOptions_Init(&pub_opts);
  pub_opts.MaxWait = 30000;
  ASSERT_EQ(js_PublishAsyncComplete(client->js(), &pub_opts), NATS_OK);
  auto stream_before = client->SnapshotStream("CRASH");
  auto consumer_before = client->SnapshotConsumer("CRASH", "agent");
  ASSERT_TRUE(stream_before.ok() && consumer_before.ok());
  ASSERT_EQ(stream_before->consumers, 1);

  const std::string url = server.url();  // built before fork: the child only calls execl
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl(REPLAY_READER_PATH, "replay_reader", url.c_str(), "CRASH", "agent",
            static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  auto consumers = [&] {
    auto s = client->SnapshotStream("CRASH");
    return s.ok() ? s->consumers : -1;
  };
  bool reading = WaitFor([&] { return consumers() == 2; }, std::chrono::seconds(10));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(reading) << "the reader never created its consumer";
  EXPECT_TRUE(WIFSIGNALED(status)) << "the reader exited on its own: " << status;

  // The inactivity threshold is 10 s; allow for the server's check interval.
  EXPECT_TRUE(WaitFor([&] { return consumers() == 1; }, std::chrono::seconds(30)));
  auto stream_after = client->SnapshotStream("CRASH");
  auto consumer_after = client->SnapshotConsumer("CRASH", "agent");
  ASSERT_TRUE(stream_after.ok() && consumer_after.ok());
  EXPECT_EQ(*stream_after, *stream_before);
  EXPECT_EQ(*consumer_after, *consumer_before);
}

}  // namespace
}  // namespace agentckpt
