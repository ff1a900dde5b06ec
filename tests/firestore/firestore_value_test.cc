// Unit tests of the Firestore typed-value codec (store/firestore_value.h).
#include "store/firestore/firestore_value.h"

#include <gtest/gtest.h>

#include "checkpoint/checkpoint_json.h"
#include "tests/support/fixtures.h"

namespace agentckpt {
namespace {

using nlohmann::json;
using testing::LoadFixtureCheckpoint;
using testing::MakeCheckpoint;

SealedCheckpoint SealOrDie(Checkpoint cp) {
  auto sealed = Seal(std::move(cp));
  EXPECT_TRUE(sealed.ok()) << sealed.status().ToString();
  return std::move(sealed).value();
}

TEST(FirestoreValueTest, EncodesEachJsonTypeAsItsTypedValue) {
  EXPECT_EQ(JsonToFirestoreValue(json(nullptr), "").value(), (json{{"nullValue", nullptr}}));
  EXPECT_EQ(JsonToFirestoreValue(json(true), "").value(), (json{{"booleanValue", true}}));
  EXPECT_EQ(JsonToFirestoreValue(json(-42), "").value(), (json{{"integerValue", "-42"}}));
  EXPECT_EQ(JsonToFirestoreValue(json(18446744073709551615ULL), "").value(),
            (json{{"integerValue", "18446744073709551615"}}));
  EXPECT_EQ(JsonToFirestoreValue(json("x"), "title").value(), (json{{"stringValue", "x"}}));
  EXPECT_EQ(JsonToFirestoreValue(json("2026-11-03T02:45:00.000Z"), "timestamp").value(),
            (json{{"timestampValue", "2026-11-03T02:45:00.000Z"}}));
  EXPECT_EQ(JsonToFirestoreValue(json::array(), "").value(),
            (json{{"arrayValue", json::object()}}));
  EXPECT_EQ(JsonToFirestoreValue(json::object(), "").value(), (json{{"mapValue", json::object()}}));
  EXPECT_EQ(
      JsonToFirestoreValue(json::array({1, "a"}), "").value(),
      (json{{"arrayValue", {{"values", {{{"integerValue", "1"}}, {{"stringValue", "a"}}}}}}}));
  EXPECT_FALSE(JsonToFirestoreValue(json(1.5), "").ok());
  EXPECT_FALSE(JsonToFirestoreValue(json("yesterday"), "expireAt").ok());
}

TEST(FirestoreValueTest, DecodesFirestoreShapesIncludingOmittedEmptyMembers) {
  EXPECT_EQ(FirestoreValueToJson({{"integerValue", "1847"}}, "x").value(), json(1847));
  EXPECT_EQ(FirestoreValueToJson({{"integerValue", "-9223372036854775808"}}, "x").value(),
            json(INT64_MIN));
  EXPECT_EQ(FirestoreValueToJson({{"arrayValue", json::object()}}, "x").value(), json::array());
  EXPECT_EQ(FirestoreValueToJson({{"mapValue", json::object()}}, "x").value(), json::object());
  EXPECT_EQ(FirestoreValueToJson({{"nullValue", "NULL_VALUE"}}, "x").value(), json(nullptr));
  auto bad = FirestoreValueToJson({{"integerValue", "12x"}}, "a.b");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("a.b:", 0), 0u) << bad.status().message();
  EXPECT_FALSE(FirestoreValueToJson({{"geoPointValue", json::object()}}, "x").ok());
  EXPECT_FALSE(FirestoreValueToJson({{"a", 1}, {"b", 2}}, "x").ok());
}

// Found by fuzz/firestore_value_fuzzer: std::stoull skips spaces and takes a sign, so " -1"
// decoded as 18446744073709551615.
TEST(FirestoreValueTest, IntegerValueIsOnlyAPlainDecimal) {
  for (const char* bad : {" -1", "-", "", "+5", " 5", "5 ", "0x10", "--1", "1e3", "-+1"}) {
    auto r = FirestoreValueToJson({{"integerValue", bad}}, "x");
    EXPECT_FALSE(r.ok()) << '"' << bad << "\" decoded as " << r->dump();
  }
  EXPECT_EQ(FirestoreValueToJson({{"integerValue", "-0"}}, "x").value(), json(0));
  EXPECT_EQ(FirestoreValueToJson({{"integerValue", "007"}}, "x").value(), json(7));
  EXPECT_FALSE(FirestoreValueToJson({{"integerValue", "18446744073709551616"}}, "x").ok());
  EXPECT_FALSE(FirestoreValueToJson({{"integerValue", "-9223372036854775809"}}, "x").ok());
}

TEST(FirestoreValueTest, TimestampsComeBackInTheHashedFormWhateverPrecisionFirestoreUses) {
  // Firestore drops a zero fraction and may add micro- or nanoseconds.
  EXPECT_EQ(FirestoreValueToJson({{"timestampValue", "2026-11-03T02:45:00Z"}}, "t").value(),
            json("2026-11-03T02:45:00.000Z"));
  EXPECT_EQ(FirestoreValueToJson({{"timestampValue", "2026-11-03T02:45:00.120Z"}}, "t").value(),
            json("2026-11-03T02:45:00.120Z"));
  EXPECT_EQ(
      FirestoreValueToJson({{"timestampValue", "2026-11-03T02:45:00.123456789Z"}}, "t").value(),
      json("2026-11-03T02:45:00.123Z"));
  EXPECT_EQ(FirestoreValueToJson({{"timestampValue", "2026-11-03T03:45:00.5+01:00"}}, "t").value(),
            json("2026-11-03T02:45:00.500Z"));
}

TEST(FirestoreValueTest, CheckpointFieldsAreTypedAndVerifyAfterARoundTrip) {
  for (const char* name : {"checkpoint-16k.json", "checkpoint-max.json"}) {
    SealedCheckpoint sealed = SealOrDie(LoadFixtureCheckpoint(name));
    auto fields = CheckpointToFirestoreFields(sealed);
    ASSERT_TRUE(fields.ok()) << fields.status().ToString();
    const json& f = *fields;
    EXPECT_EQ(f["sequenceNumber"], (json{{"integerValue", "1847"}})) << name;
    EXPECT_TRUE(f["timestamp"].contains("timestampValue"));
    EXPECT_TRUE(f["expireAt"].contains("timestampValue"));
    EXPECT_EQ(f["contentSha256"]["stringValue"], sealed.doc.content_sha256);
    EXPECT_TRUE(f["activeTask"]["mapValue"]["fields"]["startedAt"].contains("timestampValue"));
    const json& log = f["contextSummary"]["mapValue"]["fields"]["toolCallLog"]["arrayValue"];
    ASSERT_TRUE(log.contains("values"));
    EXPECT_TRUE(log["values"][0]["mapValue"]["fields"]["timestamp"].contains("timestampValue"));

    // Through JSON text, as it travels over HTTP.
    json reparsed = json::parse(f.dump());
    auto back = CheckpointFromFirestoreFields(reparsed);
    ASSERT_TRUE(back.ok()) << name << ": " << back.status().ToString();
    EXPECT_EQ(CheckpointToJson(*back), CheckpointToJson(sealed.doc));
  }
}

TEST(FirestoreValueTest, TimestampsRewrittenWithoutFractionStillVerify) {
  SealedCheckpoint sealed = SealOrDie(MakeCheckpoint("agent-a", 3));  // whole-second times
  json f = CheckpointToFirestoreFields(sealed).value();
  // What Firestore itself returns for a whole-second timestamp.
  std::string t = f["timestamp"]["timestampValue"].get<std::string>();
  ASSERT_EQ(t.substr(t.size() - 5), ".000Z");
  f["timestamp"]["timestampValue"] = t.substr(0, t.size() - 5) + "Z";
  auto back = CheckpointFromFirestoreFields(f);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->timestamp_ms, sealed.doc.timestamp_ms);
}

TEST(FirestoreValueTest, AnyAlteredFieldIsDataLoss) {
  SealedCheckpoint sealed = SealOrDie(MakeCheckpoint("agent-a", 3));
  json f = CheckpointToFirestoreFields(sealed).value();
  json changed = f;
  changed["contextSummary"]["mapValue"]["fields"]["completedSteps"] = {{"integerValue", "2"}};
  EXPECT_EQ(CheckpointFromFirestoreFields(changed).status().code(), StatusCode::kDataLoss);
  json retyped = f;
  retyped["sequenceNumber"] = {{"stringValue", "3"}};
  EXPECT_EQ(CheckpointFromFirestoreFields(retyped).status().code(), StatusCode::kDataLoss);
  json no_hash = f;
  no_hash.erase("contentSha256");
  EXPECT_EQ(CheckpointFromFirestoreFields(no_hash).status().code(), StatusCode::kDataLoss);
  json garbage = f;
  garbage["timestamp"] = {{"bytesValue", "AAAA"}};
  EXPECT_EQ(CheckpointFromFirestoreFields(garbage).status().code(), StatusCode::kDataLoss);
}

TEST(FirestoreValueTest, MicrosecondTimestampsRoundTrip) {
  auto us = ParseRfc3339Micros("2026-11-22T04:11:43.161094Z");
  ASSERT_TRUE(us.ok());
  EXPECT_EQ(FormatRfc3339Micros(*us), "2026-11-22T04:11:43.161094Z");
  EXPECT_EQ(ParseRfc3339Micros("2026-11-22T04:11:43Z").value() % 1000000, 0);
  EXPECT_EQ(ParseRfc3339Micros("2026-11-22T04:11:43.1234567Z").value() % 1000000, 123456);
  EXPECT_EQ(FormatRfc3339Micros(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_FALSE(ParseRfc3339Micros("not a time").ok());
}

}  // namespace
}  // namespace agentckpt
