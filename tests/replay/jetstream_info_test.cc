// ApiReplyJson (replay/jetstream_info.h): what a JetStream API reply's error means for the caller.
// The replies are the JSON nats-server 2.9 sends (code: its HTTP-like class; err_code: the
// JetStream error).
#include "replay/jetstream_info.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <string>

#include "nats/nats_handles.h"

namespace agentckpt {
namespace {

nats_handles::MsgPtr Reply(const std::string& body) {
  EXPECT_EQ(nats_Open(-1), NATS_OK);  // nats.c's allocator and locks; a no-op after the first
  natsMsg* m = nullptr;
  EXPECT_EQ(natsMsg_Create(&m, "_INBOX.x", nullptr, body.data(), static_cast<int>(body.size())),
            NATS_OK);
  return nats_handles::MsgPtr(m);
}

std::string ErrorReply(int code, int err_code, const std::string& description) {
  return "{\"type\":\"io.nats.jetstream.api.v1.consumer_info_response\",\"error\":{\"code\":" +
         std::to_string(code) + ",\"err_code\":" + std::to_string(err_code) +
         ",\"description\":\"" + description + "\"}}";
}

TEST(ApiReplyJsonTest, AClusterWithoutALeaderIsUnavailableNotAPermanentRefusal) {
  auto r = Reply(ErrorReply(503, 10008, "JetStream system temporarily unavailable"));
  int api_error = 0;
  auto j = ApiReplyJson(r.get(), "consumer info", &api_error);
  EXPECT_EQ(j.status().code(), StatusCode::kUnavailable) << j.status().ToString();
  EXPECT_EQ(api_error, 10008);
  EXPECT_NE(j.status().message().find("temporarily unavailable"), std::string::npos);
}

TEST(ApiReplyJsonTest, MissingStreamOrConsumerIsNotFound) {
  auto stream = Reply(ErrorReply(404, 10059, "stream not found"));
  EXPECT_EQ(ApiReplyJson(stream.get(), "stream info").status().code(), StatusCode::kNotFound);
  auto consumer = Reply(ErrorReply(404, 10014, "consumer not found"));
  EXPECT_EQ(ApiReplyJson(consumer.get(), "consumer info").status().code(), StatusCode::kNotFound);
}

TEST(ApiReplyJsonTest, ARefusalThatRetryingCannotChangeIsFailedPrecondition) {
  auto r = Reply(ErrorReply(400, 10084,
                            "multiple non-filtered consumers not allowed on "
                            "workqueue stream"));
  int api_error = 0;
  EXPECT_EQ(ApiReplyJson(r.get(), "create", &api_error).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(api_error, 10084);
}

TEST(ApiReplyJsonTest, NoReplyAndAReplyThatIsNotJson) {
  EXPECT_EQ(ApiReplyJson(nullptr, "stream info").status().code(), StatusCode::kDeadlineExceeded);
  auto r = Reply("not json");
  EXPECT_EQ(ApiReplyJson(r.get(), "stream info").status().code(), StatusCode::kInternal);
  auto ok = Reply("{\"config\":{\"name\":\"S\"}}");
  ASSERT_TRUE(ApiReplyJson(ok.get(), "stream info").ok());
}

}  // namespace
}  // namespace agentckpt
