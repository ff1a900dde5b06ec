#include "sidecar/create_request.h"

#include <gtest/gtest.h>

namespace agentckpt {
namespace {

TEST(ParseCreateRequestTest, EmptyPayloadIsManual) {
  auto r = ParseCreateRequest("");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->trigger, TriggerReason::kManual);
  EXPECT_EQ(r->task_id, "");
}

TEST(ParseCreateRequestTest, ReadsTriggerAndTaskId) {
  auto r = ParseCreateRequest(R"({"trigger":"pre_compaction","taskId":"t-1","other":3})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->trigger, TriggerReason::kPreCompaction);
  EXPECT_EQ(r->task_id, "t-1");
  auto m = ParseCreateRequest(R"({"trigger":"manual"})");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->trigger, TriggerReason::kManual);
}

TEST(ParseCreateRequestTest, RejectsNonObjects) {
  for (const char* p : {"[]", "3", "\"x\"", "{", "null", "{\"a\":1}}", "\xff"}) {
    auto r = ParseCreateRequest(p);
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), "payload: expected a JSON object") << p;
  }
}

TEST(ParseCreateRequestTest, RejectsTriggersOtherThanManualAndPreCompaction) {
  for (const char* p : {R"({"trigger":"periodic"})", R"({"trigger":"pre_shutdown"})",
                        R"({"trigger":"nope"})", R"({"trigger":1})", R"({"trigger":null})"}) {
    auto r = ParseCreateRequest(p);
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.status().message(), "trigger: expected \"manual\" or \"pre_compaction\"") << p;
  }
}

TEST(ParseCreateRequestTest, RejectsNonStringTaskIdAndReportsItFirst) {
  auto r = ParseCreateRequest(R"({"taskId":5})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "taskId: expected a string");
  auto both = ParseCreateRequest(R"({"trigger":"bad","taskId":[]})");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().message(), "taskId: expected a string");
}

}  // namespace
}  // namespace agentckpt
