#include "common/json_member.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace agentckpt {
namespace {

using nlohmann::json;

const json kReply = json::parse(R"({"s":"text","n":7,"neg":-3,"big":18446744073709551615,
  "f":1.5,"b":true,"o":{"k":1},"a":[1],"null":null})");

TEST(JsonMemberTest, ReadsAMemberOfTheAskedType) {
  EXPECT_EQ(JsonMemberOr(kReply, "s", std::string("x")), "text");
  EXPECT_EQ(JsonMemberOr(kReply, "n", uint64_t{0}), 7u);
  EXPECT_EQ(JsonMemberOr(kReply, "n", 0), 7);
  EXPECT_EQ(JsonMemberOr(kReply, "neg", int64_t{0}), -3);
  EXPECT_EQ(JsonMemberOr(kReply, "big", uint64_t{0}), UINT64_MAX);
  EXPECT_TRUE(JsonMemberOr(kReply, "b", false));
  EXPECT_EQ(JsonMemberOr(kReply, "a", json()), json::parse("[1]"));
  EXPECT_EQ(JsonObjectMember(kReply, "o"), json::parse(R"({"k":1})"));
}

// Where nlohmann::json's value() throws type_error, the fallback comes back.
TEST(JsonMemberTest, AMemberOfAnotherTypeGivesTheFallbackWithoutThrowing) {
  EXPECT_THROW(kReply.value("n", std::string()), json::type_error);
  EXPECT_EQ(JsonMemberOr(kReply, "n", std::string("x")), "x");
  EXPECT_EQ(JsonMemberOr(kReply, "s", 5), 5);
  EXPECT_EQ(JsonMemberOr(kReply, "neg", uint64_t{9}), 9u);  // negative: not unsigned
  EXPECT_EQ(JsonMemberOr(kReply, "f", 4), 4);               // not an integer
  EXPECT_EQ(JsonMemberOr(kReply, "big", 2), 2);             // does not fit an int
  EXPECT_EQ(JsonMemberOr(kReply, "big", int64_t{2}), 2);
  EXPECT_EQ(JsonMemberOr(kReply, "null", uint64_t{1}), 1u);
  EXPECT_EQ(JsonMemberOr(kReply, "s", true), true);
  EXPECT_EQ(JsonObjectMember(kReply, "a"), json::object());
  EXPECT_EQ(JsonObjectMember(kReply, "missing"), json::object());
}

TEST(JsonMemberTest, AValueThatIsNotAnObjectGivesTheFallback) {
  EXPECT_THROW(json("text").value("k", 0), json::type_error);
  EXPECT_EQ(JsonMemberOr(json("text"), "k", 3), 3);
  EXPECT_EQ(JsonMemberOr(json::array({1, 2}), "k", std::string("d")), "d");
  EXPECT_EQ(JsonObjectMember(json(), "k"), json::object());
}

}  // namespace
}  // namespace agentckpt
