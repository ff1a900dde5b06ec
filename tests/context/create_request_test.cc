#include "context/create_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace agentckpt {
namespace {

TEST(ParseCreateRequestTest, EmptyPayloadIsManual) {
  auto r = ParseCreateRequest("");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->trigger, TriggerReason::kManual);
  EXPECT_EQ(r->task_id, "");
}

TEST(ParseCreateRequestTest, ReadsTriggerAndTaskId) {
  auto r = ParseCreateRequest(R"({"trigger":"pre_compaction","taskId":"t-1"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->trigger, TriggerReason::kPreCompaction);
  EXPECT_EQ(r->task_id, "t-1");
  auto m = ParseCreateRequest(R"({"trigger":"manual"})");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->trigger, TriggerReason::kManual);
}

TEST(ParseCreateRequestTest, RejectsNonObjects) {
  for (const char* p : {"[]", "3", "\"x\"", "{", "null", "{\"a\":1}}", "\xff"}) {
    std::string field = "unset";
    auto r = ParseCreateRequest(p, &field);
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), "payload: expected a JSON object") << p;
    EXPECT_EQ(field, "") << "the whole payload is at fault: " << p;
  }
}

TEST(ParseCreateRequestTest, RejectsUnknownFieldsNamingThem) {
  std::string field;
  auto r = ParseCreateRequest(R"({"trigger":"manual","force":true})", &field);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "force: unknown field");
  EXPECT_EQ(field, "force");
  // Other spellings of the known members are unknown fields too.
  for (const char* name : {"taskid", "Trigger", "task_id"}) {
    nlohmann::json body = {{name, "x"}};
    auto bad = ParseCreateRequest(body.dump(), &field);
    ASSERT_FALSE(bad.ok()) << name;
    EXPECT_EQ(bad.status().message(), std::string(name) + ": unknown field");
    EXPECT_EQ(field, name);
  }
  // An empty member name is spelled "" (an empty field means the whole payload). Found by
  // nats_payload_fuzzer: {"":6}.
  auto empty = ParseCreateRequest(R"({"":6})", &field);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(), "\"\": unknown field");
  EXPECT_EQ(field, "\"\"");
}

TEST(ParseCreateRequestTest, ReportsTheFirstBadMemberByName) {
  // Members are checked in the order of their names, as the HTTP API reports them.
  std::string field;
  auto early = ParseCreateRequest(R"({"trigger":"periodic","extra":1})", &field);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(field, "extra");
  auto late = ParseCreateRequest(R"({"trigger":"periodic","zzz":1})", &field);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(field, "trigger");
  EXPECT_EQ(late.status().message(), "trigger: expected \"manual\" or \"pre_compaction\"");
}

TEST(ParseCreateRequestTest, LeavesFieldAloneWhenAccepted) {
  std::string field = "unchanged";
  ASSERT_TRUE(ParseCreateRequest(R"({"taskId":"t"})", &field).ok());
  EXPECT_EQ(field, "unchanged");
}

TEST(CreateRequestTest, RequestedTriggerIsTheValidOneAskedForElseManual) {
  EXPECT_EQ(RequestedTrigger(R"({"trigger":"pre_compaction","force":1})"),
            TriggerReason::kPreCompaction);
  EXPECT_EQ(RequestedTrigger(R"({"trigger":"manual"})"), TriggerReason::kManual);
  for (const char* p : {"", "not json", "[]", R"({"taskId":1})", R"({"trigger":"periodic"})",
                        R"({"trigger":"pre_shutdown"})", R"({"trigger":7})"}) {
    EXPECT_EQ(RequestedTrigger(p), TriggerReason::kManual) << p;
  }
}

TEST(ParseCreateRequestTest, RejectsTriggersOtherThanManualAndPreCompaction) {
  for (const char* p : {R"({"trigger":"periodic"})", R"({"trigger":"pre_shutdown"})",
                        R"({"trigger":"nope"})", R"({"trigger":1})", R"({"trigger":null})"}) {
    std::string field;
    auto r = ParseCreateRequest(p, &field);
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.status().message(), "trigger: expected \"manual\" or \"pre_compaction\"") << p;
    EXPECT_EQ(field, "trigger") << p;
  }
}

TEST(ParseCreateRequestTest, RejectsNonStringTaskIdAndReportsItFirst) {
  std::string field;
  auto r = ParseCreateRequest(R"({"taskId":5})", &field);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "taskId: expected a string");
  EXPECT_EQ(field, "taskId");
  auto both = ParseCreateRequest(R"({"trigger":"bad","taskId":[]})");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().message(), "taskId: expected a string");
}

}  // namespace
}  // namespace agentckpt
