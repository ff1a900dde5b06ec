// A fixture for tests that run the real `agentckpt` binary: a real nats-server with the agent's
// JetStream inbox (stream INBOX, durable "agent" filtered on inbox.AGENT.>), a SQLite store file
// in a temp dir, a free HTTP port, and a NATS subscriber on agent.AGENT.checkpoint.>.
#pragma once

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/checkpoint_store.h"
#include "tests/sidecar/sidecar_process.h"
#include "tests/support/jetstream_fixture.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {

inline constexpr char kProcAgent[] = "agent-proc";

class SidecarEnvTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // The environment for the sidecar; `overrides` replace or add variables.
  std::map<std::string, std::string> SidecarEnv(
      const std::map<std::string, std::string>& overrides = {}) const;
  // Starts the sidecar and waits until /healthz answers (fails the test otherwise).
  std::unique_ptr<SidecarProcess> StartSidecar(
      const std::map<std::string, std::string>& overrides = {});
  // Polls GET /readyz (bounded: 200 polls 50 ms apart) until it answers `status`; the last reply.
  HttpReply WaitReadyz(int status);
  // PUTs the checkpoint-16k context with the title `prefix` + N, N = 0, 1, ..., 100 ms apart,
  // until one is answered 200 (bounded: 600 tries); that title, or "" if none was.
  std::string PutUntilAcknowledged(const std::string& prefix);
  // SIGKILLs `running`, starts the sidecar again with `overrides` and EXPECTs its context's
  // activeTask.title to be `title`; then stops it with SIGTERM.
  void ExpectRestartRestoresTitle(SidecarProcess* running,
                                  const std::map<std::string, std::string>& overrides,
                                  const std::string& title);
  // Opens the store file (a second connection beside the sidecar's).
  std::unique_ptr<CheckpointStore> OpenTestStore() const;
  // The agent's checkpoints, newest first.
  std::vector<CheckpointInfo> ListCheckpoints() const;
  // Next event on agent.AGENT.checkpoint.> within `timeout_ms`: {"subject", "data"} and
  // "traceparent" when the message has that header; null on timeout.
  nlohmann::json NextEvent(int timeout_ms = 5000);
  // Sends a NATS request and returns the parsed reply (null on timeout).
  nlohmann::json Request(const std::string& subject, const std::string& body,
                         int timeout_ms = 5000);

  std::unique_ptr<NatsServerProcess> nats_;
  std::unique_ptr<JetStreamTestClient> js_;
  natsConnection* events_nc_ = nullptr;
  natsSubscription* events_ = nullptr;
  TempDir dir_;
  int port_ = 0;
};

}  // namespace agentckpt::testing
