// The emulator's REST surface and error shapes, over HTTP against the real binary.
#include <gtest/gtest.h>

#include "tests/firestore/emulator_process.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

const std::string kDb = "projects/emu/databases/(default)/documents";

class FirestoreEmulatorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    emulator_ = new EmulatorProcess();
    ASSERT_TRUE(emulator_->Start().ok());
  }
  static void TearDownTestSuite() {
    delete emulator_;
    emulator_ = nullptr;
  }
  void SetUp() override {
    auto r = emulator_->Request("DELETE", "/emulator/v1/" + kDb);
    ASSERT_TRUE(r.ok() && r->first == 200);
  }
  // POST/GET/... under /v1/; returns {status, parsed body}.
  std::pair<int, json> Call(const std::string& method, const std::string& path,
                            const json& body = json()) {
    auto r = emulator_->Request(method, "/v1/" + path, body.is_null() ? "" : body.dump());
    EXPECT_TRUE(r.ok());
    return {r->first, json::parse(r->second, nullptr, false)};
  }
  std::pair<int, json> Commit(const json& writes) {
    return Call("POST", kDb + ":commit", {{"writes", writes}});
  }
  static json Set(const std::string& rest, const json& fields) {
    return {{"update", {{"name", kDb + "/" + rest}, {"fields", fields}}}};
  }
  static void ExpectError(const std::pair<int, json>& reply, int http, const char* status) {
    EXPECT_EQ(reply.first, http) << reply.second.dump();
    EXPECT_EQ(reply.second["error"]["code"], http);
    EXPECT_EQ(reply.second["error"]["status"], status);
    EXPECT_TRUE(reply.second["error"]["message"].is_string());
  }

  static EmulatorProcess* emulator_;
};

EmulatorProcess* FirestoreEmulatorTest::emulator_ = nullptr;

TEST_F(FirestoreEmulatorTest, ACommitWithOneFailedPreconditionAppliesNothing) {
  ASSERT_EQ(Commit(json::array({Set("c/a", {{"n", {{"integerValue", "1"}}}})})).first, 200);
  json create = Set("c/b", {{"n", {{"integerValue", "2"}}}});
  create["currentDocument"] = {{"exists", false}};
  json conflict = Set("c/a", {{"n", {{"integerValue", "9"}}}});
  conflict["currentDocument"] = {{"exists", false}};
  ExpectError(Commit(json::array({create, conflict})), 409, "ALREADY_EXISTS");
  ExpectError(Call("GET", kDb + "/c/b"), 404, "NOT_FOUND");
  EXPECT_EQ(Call("GET", kDb + "/c/a").second["fields"]["n"]["integerValue"], "1");
}

TEST_F(FirestoreEmulatorTest, UpdateTimePreconditionsAndMasks) {
  auto first = Commit(
      json::array({Set("c/a", {{"n", {{"integerValue", "1"}}}, {"s", {{"stringValue", "x"}}}})}));
  std::string t1 = first.second["writeResults"][0]["updateTime"];
  json masked = Set("c/a", {{"n", {{"integerValue", "2"}}}});
  masked["updateMask"] = {{"fieldPaths", {"n"}}};
  masked["currentDocument"] = {{"updateTime", t1}};
  auto second = Commit(json::array({masked}));
  ASSERT_EQ(second.first, 200) << second.second.dump();
  json doc = Call("GET", kDb + "/c/a").second;
  EXPECT_EQ(doc["fields"]["n"]["integerValue"], "2");
  EXPECT_EQ(doc["fields"]["s"]["stringValue"], "x");  // outside the mask: kept
  EXPECT_EQ(doc["updateTime"], second.second["writeResults"][0]["updateTime"]);
  ExpectError(Commit(json::array({masked})), 400, "FAILED_PRECONDITION");  // t1 is stale now
  json must_exist = Set("c/zz", json::object());
  must_exist["currentDocument"] = {{"exists", true}};
  ExpectError(Commit(json::array({must_exist})), 404, "NOT_FOUND");
}

TEST_F(FirestoreEmulatorTest, TransformsAndDeletesInOneCommit) {
  json w = Set("c/a", {{"name", {{"stringValue", "a"}}}});
  w["updateTransforms"] = {{{"fieldPath", "top"}, {"maximum", {{"integerValue", "5"}}}},
                           {{"fieldPath", "at"}, {"setToServerValue", "REQUEST_TIME"}}};
  ASSERT_EQ(Commit(json::array({w, Set("c/b", json::object())})).first, 200);
  json lower = {{"transform",
                 {{"document", kDb + "/c/a"},
                  {"fieldTransforms",
                   {{{"fieldPath", "top"}, {"maximum", {{"integerValue", "3"}}}},
                    {{"fieldPath", "hits"}, {"increment", {{"integerValue", "2"}}}}}}}}};
  auto reply = Commit(json::array({lower, {{"delete", kDb + "/c/b"}}}));
  ASSERT_EQ(reply.first, 200) << reply.second.dump();
  json doc = Call("GET", kDb + "/c/a").second;
  EXPECT_EQ(doc["fields"]["top"]["integerValue"], "5");
  EXPECT_EQ(doc["fields"]["hits"]["integerValue"], "2");
  EXPECT_TRUE(doc["fields"]["at"].contains("timestampValue"));
  ExpectError(Call("GET", kDb + "/c/b"), 404, "NOT_FOUND");
}

TEST_F(FirestoreEmulatorTest, RunQueryFiltersOrdersLimitsAndSelects) {
  json writes = json::array();
  for (int i = 1; i <= 5; ++i) {
    writes.push_back(Set(
        "p/x/items/i" + std::to_string(i),
        {{"n", {{"integerValue", std::to_string(i)}}}, {"odd", {{"booleanValue", i % 2 == 1}}}}));
  }
  writes.push_back(
      Set("p/y/items/j1", {{"n", {{"integerValue", "10"}}}, {"odd", {{"booleanValue", false}}}}));
  ASSERT_EQ(Commit(writes).first, 200);
  json q = {{"structuredQuery",
             {{"from", {{{"collectionId", "items"}}}},
              {"where",
               {{"compositeFilter",
                 {{"op", "AND"},
                  {"filters",
                   {{{"fieldFilter",
                      {{"field", {{"fieldPath", "odd"}}},
                       {"op", "EQUAL"},
                       {"value", {{"booleanValue", true}}}}}},
                    {{"fieldFilter",
                      {{"field", {{"fieldPath", "n"}}},
                       {"op", "GREATER_THAN"},
                       {"value", {{"integerValue", "1"}}}}}}}}}}}},
              {"orderBy", {{{"field", {{"fieldPath", "n"}}}, {"direction", 2}}}},  // enum as int
              {"limit", 1},
              {"select", {{"fields", {{{"fieldPath", "n"}}}}}}}}};
  auto reply = Call("POST", kDb + "/p/x:runQuery", q);
  ASSERT_EQ(reply.first, 200) << reply.second.dump();
  ASSERT_EQ(reply.second.size(), 1u);
  EXPECT_EQ(reply.second[0]["document"]["name"], kDb + "/p/x/items/i5");
  EXPECT_EQ(reply.second[0]["document"]["fields"], (json{{"n", {{"integerValue", "5"}}}}));

  // A collection-group query from the root sees both parents; an empty result has a readTime.
  json group = {{"structuredQuery",
                 {{"from", {{{"collectionId", "items"}, {"allDescendants", true}}}},
                  {"orderBy", {{{"field", {{"fieldPath", "n"}}}, {"direction", "DESCENDING"}}}}}}};
  auto all = Call("POST", kDb + ":runQuery", group);
  ASSERT_EQ(all.second.size(), 6u);
  EXPECT_EQ(all.second[0]["document"]["name"], kDb + "/p/y/items/j1");
  json none = q;
  none["structuredQuery"]["from"][0]["collectionId"] = "nothing";
  auto empty = Call("POST", kDb + "/p/x:runQuery", none);
  ASSERT_EQ(empty.second.size(), 1u);
  EXPECT_TRUE(empty.second[0].contains("readTime"));
  EXPECT_FALSE(empty.second[0].contains("document"));
}

TEST_F(FirestoreEmulatorTest, BatchGetPatchDeleteAndList) {
  auto patched = Call("PATCH", kDb + "/c/a?currentDocument.exists=false",
                      {{"fields", {{"v", {{"stringValue", "1"}}}}}});
  ASSERT_EQ(patched.first, 200) << patched.second.dump();
  EXPECT_EQ(patched.second["name"], kDb + "/c/a");
  ExpectError(
      Call("PATCH", kDb + "/c/a?currentDocument.exists=false", {{"fields", json::object()}}), 409,
      "ALREADY_EXISTS");
  auto got = Call("POST", kDb + ":batchGet", {{"documents", {kDb + "/c/a", kDb + "/c/b"}}});
  ASSERT_EQ(got.second.size(), 2u);
  EXPECT_EQ(got.second[0]["found"]["name"], kDb + "/c/a");
  EXPECT_EQ(got.second[1]["missing"], kDb + "/c/b");
  EXPECT_EQ(Call("GET", kDb + "/c").second["documents"].size(), 1u);
  ExpectError(Call("DELETE", kDb + "/c/b?currentDocument.exists=true"), 404, "NOT_FOUND");
  EXPECT_EQ(Call("DELETE", kDb + "/c/a").first, 200);
  ExpectError(Call("GET", kDb + "/c/a"), 404, "NOT_FOUND");
  ExpectError(Call("POST", kDb + ":commit", json("not an object")), 400, "INVALID_ARGUMENT");
}

TEST_F(FirestoreEmulatorTest, InjectedFaultsUseFirestoreErrorShapes) {
  ASSERT_TRUE(emulator_->SetFaults({{"errorRate", 1.0}, {"errorStatus", 429}}).ok());
  ExpectError(Call("GET", kDb + "/c/a"), 429, "RESOURCE_EXHAUSTED");
  ASSERT_TRUE(emulator_->SetFaults({{"dropRate", 1.0}}).ok());
  auto dropped = emulator_->Request("GET", "/v1/" + kDb + "/c/a");
  EXPECT_FALSE(dropped.ok()) << "a dropped connection must not look like a reply";
  ASSERT_TRUE(emulator_->SetFaults(json::object()).ok());
  auto stats = emulator_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_GE((*stats)["errors"].get<int>(), 1);
  EXPECT_GE((*stats)["drops"].get<int>(), 1);
}

TEST_F(FirestoreEmulatorTest, MatchedFaultsSpareEveryOtherRequest) {
  ASSERT_EQ(Commit(json::array({Set("c/a", {{"n", {{"integerValue", "1"}}}})})).first, 200);
  ASSERT_TRUE(emulator_->SetFaults({{"errorRate", 1.0}, {"match", "\"collectionId\":\"c\""}}).ok());
  json query = {{"structuredQuery", {{"from", json::array({{{"collectionId", "c"}}})}}}};
  ExpectError(Call("POST", kDb + ":runQuery", query), 503, "UNAVAILABLE");  // its body matches
  EXPECT_EQ(Call("GET", kDb + "/c/a").first, 200);                          // neither path nor body
  query["structuredQuery"]["from"][0]["collectionId"] = "d";
  EXPECT_EQ(Call("POST", kDb + ":runQuery", query).first, 200);
  // A path match; script entries, too, go to matching requests only.
  ASSERT_TRUE(emulator_->SetFaults({{"script", {"error"}}, {"match", "/c/a"}}).ok());
  EXPECT_EQ(Call("GET", kDb + "/c/b").first, 404);  // not matched: the script entry is kept
  ExpectError(Call("GET", kDb + "/c/a"), 503, "UNAVAILABLE");
  EXPECT_EQ(Call("GET", kDb + "/c/a").first, 200);  // the script is spent
  ASSERT_TRUE(emulator_->SetFaults(json::object()).ok());
}

}  // namespace
}  // namespace agentckpt::testing
