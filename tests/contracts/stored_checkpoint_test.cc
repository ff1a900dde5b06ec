// The stored checkpoint documents of both schema versions against docs/schemas/: a real sidecar
// process with encryption at rest (CKPT_ENCRYPTION_KEY_FILE) writes schema version 2 documents
// to its SQLite file; they are read back as the store holds them (the raw `document` column and
// through the SQLite store without decryption) and validated with ajv, next to the decrypted
// version 1 document the HTTP API serves.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_json.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/contracts/contract_support.h"
#include "tests/sidecar/sidecar_process.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

constexpr char kAgent[] = "contract-v2";
// A 256-bit key as 64 hex characters (docs/encryption.md, "Key format").
constexpr char kHexKey[] = "3c1f8a0b9d2e4f6071829304a5b6c7d8e9f00112233445566778899aabbccdd0";

json Entry(const std::string& label, const std::string& schema, const json& doc, bool valid) {
  return {{"label", label},
          {"schema", schema},
          {"payload", doc.dump()},
          {"expect", valid ? "valid" : "invalid"}};
}

struct StoredRow {
  std::string checkpoint_id;
  std::string document;  // the canonical form as stored, without contentSha256
  std::string content_sha256;
};

// Every row of the agent's checkpoints, oldest first, read straight from the database file.
std::vector<StoredRow> ReadRows(const std::string& db_path) {
  std::vector<StoredRow> rows;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << db_path << ": " << sqlite3_errmsg(db);
    sqlite3_close(db);
    return rows;
  }
  sqlite3_stmt* stmt = nullptr;
  const char* sql =
      "SELECT checkpoint_id, document, content_sha256 FROM checkpoints WHERE agent_id = ? "
      "ORDER BY sequence";
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot query " << db_path << ": " << sqlite3_errmsg(db);
    sqlite3_close(db);
    return rows;
  }
  sqlite3_bind_text(stmt, 1, kAgent, -1, SQLITE_STATIC);
  auto text = [stmt](int column) {
    const unsigned char* p = sqlite3_column_text(stmt, column);
    return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p));
  };
  while (sqlite3_step(stmt) == SQLITE_ROW) rows.push_back({text(0), text(1), text(2)});
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

TEST(StoredCheckpointContractTest, EncryptedVersion2DocumentsMatchTheSchemas) {
  NatsServerProcess nats;
  TempDir dir;
  const int port = PickFreePort();
  const std::string db = dir.path() + "/store.db";
  const std::string key_file = dir.path() + "/current.key";
  std::ofstream(key_file) << kHexKey << "\n";

  json manifest = json::array();
  std::string served_id;
  {
    SidecarProcess sidecar({{"AGENT_ID", kAgent},
                            {"NATS_URL", nats.url()},
                            {"CKPT_STORE", "sqlite://" + db},
                            {"CKPT_HTTP_ADDR", "127.0.0.1:" + std::to_string(port)},
                            {"CKPT_PERIOD_S", "3600"},
                            {"CKPT_ENCRYPTION_KEY_FILE", key_file}},
                           dir.path());
    ASSERT_TRUE(sidecar.WaitHealthy(port)) << sidecar.Describe();
    // A task_phase_change checkpoint (the first task), a manual one, and pre_shutdown at SIGTERM.
    HttpReply put = HttpCall(port, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json"));
    ASSERT_EQ(put.status, 200) << put.body;
    HttpReply post = HttpCall(port, "POST", "/v1/checkpoints", R"({"trigger":"manual"})");
    ASSERT_EQ(post.status, 201) << post.body;
    served_id = json::parse(post.body)["checkpointId"].get<std::string>();
    // What the API serves: the decrypted plaintext (version 2, with the ledger).
    HttpReply served = HttpCall(port, "GET", "/v1/checkpoints/" + served_id);
    ASSERT_EQ(served.status, 200) << served.body;
    json v1 = json::parse(served.body);
    EXPECT_EQ(v1["schemaVersion"], 2);  // plaintext with the ledger
    EXPECT_TRUE(v1.contains("ledger"));
    manifest.push_back(Entry("served (decrypted) document", "stored-checkpoint", v1, true));
    manifest.push_back(Entry("served (decrypted) document", "checkpoint", v1, true));
    ASSERT_EQ(sidecar.Signal(SIGTERM), 0) << sidecar.Stderr();
  }

  // The documents as the store holds them.
  std::vector<StoredRow> rows = ReadRows(db);
  ASSERT_EQ(rows.size(), 3u);
  auto store = SqliteStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  json sample;  // a stored version 2 document, for the negative checks
  for (const StoredRow& row : rows) {
    json doc = json::parse(row.document, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << row.document.substr(0, 200);
    EXPECT_EQ(doc.value("schemaVersion", 0), 2) << row.checkpoint_id;
    EXPECT_TRUE(doc.contains("encryptedContextSummary")) << row.checkpoint_id;
    EXPECT_FALSE(doc.contains("contextSummary")) << row.checkpoint_id;
    // The column is the canonical form without contentSha256: a checkpoint document.
    manifest.push_back(Entry("document column " + row.checkpoint_id, "checkpoint", doc, true));
    manifest.push_back(
        Entry("document column without contentSha256", "stored-checkpoint", doc, false));
    doc["contentSha256"] = row.content_sha256;
    manifest.push_back(Entry("stored row " + row.checkpoint_id, "stored-checkpoint", doc, true));
    // The same document through the SQLite store, verified but not decrypted.
    auto stored = (*store)->GetById(kAgent, row.checkpoint_id);
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
    ASSERT_TRUE(stored->encrypted_context_summary.has_value());
    json read_back = json::parse(CheckpointToJson(*stored));
    EXPECT_EQ(read_back, doc) << row.checkpoint_id;
    manifest.push_back(
        Entry("store read-back " + row.checkpoint_id, "stored-checkpoint", read_back, true));
    if (row.checkpoint_id == served_id) sample = read_back;
  }
  ASSERT_TRUE(sample.is_object()) << "the served checkpoint is not in the store";

  // Negative checks: what mixes or breaks the two versions is rejected.
  json both = sample;
  both["contextSummary"] = {{"systemPromptHash", ""},       {"gatheringResults", ""},
                            {"planOutline", json::array()}, {"completedSteps", 0},
                            {"draftContent", ""},           {"toolCallLog", json::array()}};
  manifest.push_back(Entry("v2 with contextSummary too", "stored-checkpoint", both, false));
  json as_v1 = sample;
  as_v1["schemaVersion"] = 1;
  manifest.push_back(
      Entry("encryptedContextSummary at version 1", "stored-checkpoint", as_v1, false));
  json no_summary = sample;
  no_summary.erase("encryptedContextSummary");
  manifest.push_back(Entry("v2 without a summary", "stored-checkpoint", no_summary, false));
  json bad_alg = sample;
  bad_alg["encryptedContextSummary"]["alg"] = "A128GCM";
  manifest.push_back(Entry("v2 with another algorithm", "stored-checkpoint", bad_alg, false));
  json bad_nonce = sample;
  bad_nonce["encryptedContextSummary"]["nonce"] = "not base64!";
  manifest.push_back(Entry("v2 with a bad nonce", "checkpoint", bad_nonce, false));
  json extra = sample;
  extra["encryptedContextSummary"]["iv"] = "x";
  manifest.push_back(Entry("v2 with an unknown summary member", "checkpoint", extra, false));
  json v3 = sample;
  v3["schemaVersion"] = 3;
  manifest.push_back(Entry("schema version 3", "checkpoint", v3, false));

  std::string path = dir.path() + "/stored-manifest.json";
  ASSERT_TRUE(WriteJsonFile(path, manifest));
  ValidatorRun run = RunValidator("payloads.mjs", path);
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

}  // namespace
}  // namespace agentckpt::testing
