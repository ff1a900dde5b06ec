#include "tests/sidecar/nats_client_checks.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "nats/nats_handles.h"
#include "nats/subjects.h"
#include "tests/sidecar/sidecar_process.h"
#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {

using nlohmann::json;

bool WaitSidecarReady(int port) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (HttpCall(port, "GET", "/readyz").status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void ExpectSidecarWritesAndPublishes(int port, natsConnection* nc) {
  natsSubscription* sub = nullptr;
  std::string subject = subjects::CheckpointCreated(kProcAgent);
  ASSERT_EQ(natsConnection_SubscribeSync(&sub, nc, subject.c_str()), NATS_OK);
  ASSERT_EQ(natsConnection_FlushTimeout(nc, 2000), NATS_OK);
  HttpReply created = HttpCall(port, "POST", "/v1/checkpoints", R"({"trigger":"manual"})");
  ASSERT_EQ(created.status, 201) << created.body;
  std::string id = json::parse(created.body)["checkpointId"];
  natsMsg* msg = nullptr;
  ASSERT_EQ(natsSubscription_NextMsg(&msg, sub, 5000), NATS_OK);
  json event = json::parse(
      std::string(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))));
  EXPECT_EQ(event["checkpointId"], id);
  natsMsg_Destroy(msg);
  agentckpt::nats_handles::UnsubscribeAndDestroy(nc, sub);
  natsMsg* reply = nullptr;
  std::string request = subjects::CheckpointCreate(kProcAgent);
  ASSERT_EQ(natsConnection_RequestString(&reply, nc, request.c_str(), "{}", 5000), NATS_OK);
  json body = json::parse(
      std::string(natsMsg_GetData(reply), static_cast<size_t>(natsMsg_GetDataLength(reply))));
  EXPECT_TRUE(body.contains("checkpointId")) << body.dump();
  natsMsg_Destroy(reply);
}

}  // namespace agentckpt::testing
