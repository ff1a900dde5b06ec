#include "checkpoint/json_value.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace agentckpt {
namespace {

using nlohmann::json;

// nlohmann's own parser is the reference: the same text gives the same value.
TEST(JsonValueTest, SameValueAsNlohmannsParser) {
  const std::vector<std::string> texts = {
      R"({"a":1,"b":[true,false,null],"c":{"d":"e\u00e9\n\"q\"","f":-2.5e3}})",
      R"([])",
      R"({})",
      R"("just a string")",
      R"(9223372036854775807)",
      R"(18446744073709551615)",
      R"(-9223372036854775808)",
      R"({"k":1,"k":2})",
      R"({"emoji":"\ud83d\ude00","cjk":"漢字"})",
      R"([1.0, 0.1, 1e-300, -0.0])",
      std::string("{\"long\":\"") + std::string(100000, 'x') + "\"}",
  };
  for (const std::string& t : texts) {
    auto fast = ParseJsonValue(t);
    ASSERT_TRUE(fast.ok()) << t.substr(0, 80) << ": " << fast.status().ToString();
    json reference = json::parse(t);
    EXPECT_EQ(*fast, reference) << t.substr(0, 80);
    EXPECT_EQ(fast->type(), reference.type()) << t.substr(0, 80);
  }
}

TEST(JsonValueTest, RejectsWhatIsNotOneJsonValue) {
  for (const std::string& t : {std::string(""), std::string("{"), std::string("[1,]"),
                               std::string("{\"a\":1} x"), std::string("\"\xff\""),
                               std::string(2000, '[') + std::string(2000, ']')}) {
    auto fast = ParseJsonValue(t);
    ASSERT_FALSE(fast.ok()) << t.substr(0, 40);
    EXPECT_EQ(fast.status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace agentckpt
