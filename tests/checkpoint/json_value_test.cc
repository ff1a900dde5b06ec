#include "checkpoint/json_value.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
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

// nlohmann's dump() is the reference for DumpJsonValue.
std::string Reference(const json& v) {
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

TEST(JsonValueTest, DumpWritesWhatNlohmannWrites) {
  const std::vector<json> values = {
      json::object(),
      json::array(),
      json(nullptr),
      json(true),
      json(false),
      json(""),
      json(0),
      json(-1),
      json(std::numeric_limits<int64_t>::min()),
      json(std::numeric_limits<int64_t>::max()),
      json(std::numeric_limits<uint64_t>::max()),
      json(0.1),
      json(-0.0),
      json(1e300),
      json(2.0),
      json(std::numeric_limits<double>::quiet_NaN()),
      json(std::numeric_limits<double>::infinity()),
      json("quote \" backslash \\ slash / tab \t nl \n cr \r bs \b ff \f nul " +
           std::string(1, '\0') + " unit \x1f del \x7f"),
      json("caf\xc3\xa9 \xe6\xbc\xa2\xe5\xad\x97 \xf0\x9f\x98\x80"),
      json("bad \xff byte"),
      json("cut \xe6\xbc"),
      json::parse(R"({"b":[1,{"z":null,"a":"x"}],"a":{"":[]},"c":-3.25})"),
      json{{"ok", "fine"}, {"bad\xc0key", 1}},
      json{{"nested", {{"bad", std::string("\xed\xa0\x80")}}}},
      json::binary({1, 2, 3}),
  };
  for (const json& v : values) {
    EXPECT_EQ(DumpJsonValue(v), Reference(v)) << Reference(v);
  }
}

// Random documents: strings drawn from ASCII, control bytes, valid multi-byte sequences and
// stray bytes; numbers of every kind; nesting up to 4 levels. Fixed seed, so a failure repeats.
json RandomValue(std::mt19937_64& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth < 4 ? 8 : 6);
  auto text = [&rng] {
    static const std::vector<std::string> pieces = {"a",
                                                    "Z",
                                                    " ",
                                                    "\"",
                                                    "\\",
                                                    "/",
                                                    "\n",
                                                    "\t",
                                                    std::string(1, '\0'),
                                                    "\x01",
                                                    "\x1f",
                                                    "\x7f",
                                                    "\xc3\xa9",
                                                    "\xe2\x82\xac",
                                                    "\xf0\x9f\x98\x80",
                                                    "\xff",
                                                    "\x80",
                                                    "\xc3",
                                                    "\xed\xa0\x80",
                                                    "0123456789abcdef"};
    std::string s;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) s += pieces[rng() % pieces.size()];
    return s;
  };
  switch (kind(rng)) {
    case 0:
      return json(nullptr);
    case 1:
      return json(rng() % 2 == 0);
    case 2:
      return json(static_cast<int64_t>(rng()));
    case 3:
      return json(static_cast<uint64_t>(rng()));
    case 4:
      return json(std::ldexp(static_cast<double>(static_cast<int64_t>(rng())),
                             static_cast<int>(rng() % 200) - 100));
    case 5:
    case 6:
      return json(text());
    case 7: {
      json a = json::array();
      for (int i = static_cast<int>(rng() % 6); i > 0; --i)
        a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      for (int i = static_cast<int>(rng() % 6); i > 0; --i) o[text()] = RandomValue(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonValueTest, DumpOfRandomDocumentsWritesWhatNlohmannWrites) {
  std::mt19937_64 rng(20261128);
  int with_bad_utf8 = 0;
  for (int i = 0; i < 5000; ++i) {
    const json v = RandomValue(rng, 0);
    const std::string reference = Reference(v);
    if (reference.find("\xef\xbf\xbd") != std::string::npos) ++with_bad_utf8;
    ASSERT_EQ(DumpJsonValue(v), reference) << "document " << i;
  }
  EXPECT_GT(with_bad_utf8, 100);  // the fallback was exercised, not just the fast path
}

}  // namespace
}  // namespace agentckpt
