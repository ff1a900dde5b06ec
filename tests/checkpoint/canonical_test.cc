#include "checkpoint/canonical.h"

#include <gtest/gtest.h>

#include <iterator>

#include "checkpoint/checkpoint_json.h"
#include "checkpoint/ledger_json.h"
#include "common/sha256.h"
#include "tests/support/fixtures.h"

namespace agentckpt {
namespace {

using testing::LoadFixtureCheckpoint;

TEST(CanonicalTest, SealSetsSizeExpiryAndHash) {
  for (const char* name : {"checkpoint-16k.json", "checkpoint-max.json"}) {
    auto sealed = Seal(LoadFixtureCheckpoint(name));
    ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
    const Checkpoint& cp = sealed->doc;
    EXPECT_EQ(cp.content_sha256, Sha256Hex(sealed->canonical));
    EXPECT_EQ(cp.expire_at_ms, cp.timestamp_ms + 7LL * 86400000);
    std::string full = FullDocumentJson(*sealed);
    EXPECT_EQ(cp.size_bytes, static_cast<int64_t>(full.size())) << name;
    EXPECT_EQ(sealed->canonical, CanonicalJson(cp));
    EXPECT_EQ(sealed->canonical.find("contentSha256"), std::string::npos);
  }
}

TEST(CanonicalTest, CanonicalFormIsSortedAndCompact) {
  auto sealed = *Seal(testing::MakeCheckpoint("agent-a", 1));
  const std::string& c = sealed.canonical;
  EXPECT_EQ(c.find(' '), c.find("Write a post") + 5);  // the only spaces are inside strings
  EXPECT_EQ(c.rfind("{\"activeTask\":", 0), 0u);
  EXPECT_LT(c.find("\"agentId\""), c.find("\"checkpointId\""));
  EXPECT_LT(c.find("\"checkpointId\""), c.find("\"contextSummary\""));
  EXPECT_LT(c.find("\"triggerReason\""), c.find("\"ttlDays\""));
}

TEST(CanonicalTest, HashIsStableAcrossKeyOrderAndSpacing) {
  auto sealed = *Seal(LoadFixtureCheckpoint("checkpoint-16k.json"));
  auto j = nlohmann::json::parse(FullDocumentJson(sealed));
  std::string pretty = j.dump(2);
  auto verified = VerifyDocumentJson(pretty);
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  EXPECT_EQ(*verified, sealed.doc);
}

// The test vector quoted in docs/checkpoint-format.md; a change here is a format change.
// The documentation's test vector: a version 1 document (no ledger).
Checkpoint VectorCheckpoint() {
  Checkpoint cp;
  cp.schema_version = kLedgerlessSchemaVersion;
  cp.checkpoint_id = "7d9fd57a-0000-4000-8000-000000000003";
  cp.agent_id = "agent-vector";
  cp.timestamp_ms = 1793760303000;  // 2026-11-04T02:45:03.000Z
  cp.sequence_number = 3;
  cp.active_task = ActiveTask{"task-1", "Write a post", TaskPhase::kExecuting, 40, 1793760000000};
  cp.context_summary.gathering_results = "14 data points gathered";
  cp.context_summary.plan_outline = {"intro", "body", "outro"};
  cp.context_summary.completed_steps = 1;
  cp.context_summary.draft_content = "Draft paragraph 3";
  cp.context_summary.tool_call_log.push_back(
      ToolCallEntry{"read_file", 1793760200000, "posts/a.md", "42 lines", 12, true});
  cp.ttl_days = 7;
  return cp;
}

TEST(CanonicalTest, PinnedTestVector) {
  auto sealed = *Seal(VectorCheckpoint());
  EXPECT_EQ(sealed.canonical,
            R"({"activeTask":{"phase":"executing","progress":40,"startedAt":"2026-11-04T02:40:00.000Z",)"
            R"("taskId":"task-1","title":"Write a post"},"agentId":"agent-vector",)"
            R"("checkpointId":"7d9fd57a-0000-4000-8000-000000000003","contextSummary":)"
            R"({"completedSteps":1,"draftContent":"Draft paragraph 3","gatheringResults":)"
            R"("14 data points gathered","planOutline":["intro","body","outro"],)"
            R"("systemPromptHash":"","toolCallLog":[{"durationMs":12,"inputSummary":"posts/a.md",)"
            R"("outputSummary":"42 lines","success":true,"timestamp":"2026-11-04T02:43:20.000Z",)"
            R"("toolName":"read_file"}]},"expireAt":"2026-11-11T02:45:03.000Z",)"
            R"("natsPosition":null,"schemaVersion":1,"sequenceNumber":3,"sizeBytes":843,)"
            R"("timestamp":"2026-11-04T02:45:03.000Z","triggerReason":"periodic","ttlDays":7,)"
            R"("workspace":null})");
  EXPECT_EQ(sealed.doc.size_bytes, 843);
  EXPECT_EQ(sealed.doc.content_sha256,
            "017c8696dc9c507ec35c15cf283826228e4780d8cd618cb164a2955d5da08a5b");
}

TEST(CanonicalTest, EscapingFollowsRfc8785) {
  auto cp = VectorCheckpoint();
  cp.context_summary.draft_content = std::string("q\"b\\s/\x01\n\t\x7f\xC3\xA9", 12);
  auto sealed = *Seal(cp);
  EXPECT_NE(sealed.canonical.find(R"("draftContent":"q\"b\\s/\u0001\n\t)"
                                  "\x7f\xC3\xA9\""),
            std::string::npos)
      << sealed.canonical;
}

// The 16 KiB fixture with every field kept but its lists and long texts cut short (1,730 bytes).
// AnySingleByteChangeIsCaught verifies the whole document once per byte, a cost that grows with
// the square of the size: on the whole fixture it took 158 s under ASan.
Checkpoint TrimmedFixtureWithEveryField() {
  Checkpoint cp = LoadFixtureCheckpoint("checkpoint-16k.json");
  ContextSummary& summary = cp.context_summary;
  summary.gathering_results.resize(48);
  summary.draft_content.resize(48);
  summary.plan_outline.resize(2);
  summary.tool_call_log.resize(2);
  return cp;
}

TEST(CanonicalTest, AnySingleByteChangeIsCaught) {
  auto sealed = *Seal(TrimmedFixtureWithEveryField());
  ASSERT_TRUE(sealed.doc.active_task.has_value());
  ASSERT_TRUE(sealed.doc.nats_position.has_value());
  ASSERT_TRUE(sealed.doc.workspace.has_value());
  std::string full = FullDocumentJson(sealed);
  ASSERT_TRUE(VerifyDocumentJson(full).ok());
  ASSERT_TRUE(OpenSealed(sealed.canonical, sealed.doc.content_sha256).ok());
  size_t caught = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    std::string damaged = full;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x01);
    auto r = VerifyDocumentJson(damaged);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << i;
      ++caught;
    } else {
      ADD_FAILURE() << "byte " << i << " changed undetected: ..." << full.substr(i > 20 ? i - 20 : 0, 40);
    }
  }
  EXPECT_EQ(caught, full.size());
  for (size_t i = 0; i < sealed.canonical.size(); i += 7) {
    std::string damaged = sealed.canonical;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x20);
    auto r = OpenSealed(damaged, sealed.doc.content_sha256);
    ASSERT_FALSE(r.ok()) << i;
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  }
}

TEST(CanonicalTest, TruncatedOrForeignDocumentsAreDataLoss) {
  auto sealed = *Seal(LoadFixtureCheckpoint("checkpoint-16k.json"));
  std::string full = FullDocumentJson(sealed);
  EXPECT_EQ(VerifyDocumentJson(full.substr(0, full.size() / 2)).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(VerifyDocumentJson("{}").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(OpenSealed("", sealed.doc.content_sha256).status().code(), StatusCode::kDataLoss);
  // A document that hashes right but breaks the schema is corrupted too.
  std::string bogus = "{\"schemaVersion\":1}";
  EXPECT_EQ(OpenSealed(bogus, Sha256Hex(bogus)).status().code(), StatusCode::kDataLoss);
}

TEST(CanonicalTest, SealRejectsInvalidDocuments) {
  auto cp = testing::MakeCheckpoint("agent-a", 1);
  cp.checkpoint_id = "nope";
  auto sealed = Seal(cp);
  ASSERT_FALSE(sealed.ok());
  EXPECT_EQ(sealed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(sealed.status().message().find("checkpointId"), std::string::npos);
}

}  // namespace
}  // namespace agentckpt

namespace agentckpt {
namespace {

// The direct writer and nlohmann's dump of the same document must agree byte for byte:
// VerifyDocumentJson canonicalises foreign documents with the latter.
TEST(CanonicalTest, WriterMatchesNlohmannDump) {
  std::vector<Checkpoint> docs = {LoadFixtureCheckpoint("checkpoint-16k.json"),
                                  LoadFixtureCheckpoint("checkpoint-max.json"),
                                  testing::MakeCheckpoint("agent-z", 99)};
  Checkpoint odd = testing::MakeCheckpoint("agent-odd", 5);
  std::string every;
  for (int c = 1; c < 0x80; ++c) every.push_back(static_cast<char>(c));
  odd.context_summary.draft_content = every + "\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80";
  odd.active_task.reset();
  odd.nats_position = NatsPosition{"S", "C", 18446744073709551615ULL, 0};
  odd.workspace = Workspace{{"a\"b", "c\\d"}, true, std::string(40, 'a'), "main"};
  docs.push_back(odd);
  for (auto& cp : docs) {
    auto sealed = Seal(cp);
    ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
    EXPECT_EQ(sealed->canonical, CheckpointToJsonValue(sealed->doc, false).dump());
    EXPECT_EQ(FullDocumentJson(*sealed), CheckpointToJsonValue(sealed->doc, true).dump());
    auto back = VerifyDocumentJson(FullDocumentJson(*sealed));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, sealed->doc);
  }
}

// A ledger of open and completed calls, with every ASCII character and multi-byte text in its
// strings: the direct writer against nlohmann's dump of LedgerToJsonValue (the canonical form).
TEST(CanonicalTest, LedgerWriterMatchesNlohmannDump) {
  std::string every;
  for (int c = 1; c < 0x80; ++c) every.push_back(static_cast<char>(c));
  const std::string wide = "\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80";
  Checkpoint cp = testing::MakeCheckpoint("agent-ledger", 3);
  Ledger ledger;
  for (int i = 0; i < 40; ++i) {
    LedgerCall c;
    c.call_id = "call-" + std::to_string(i);
    c.idempotency_key = i % 3 == 0 ? every.substr(0, 100) : "key \"" + std::to_string(i) + "\"";
    c.tool_name = i % 2 ? "refund" : "write_file" + wide;
    c.effect = static_cast<ToolEffect>(i % 4);
    c.args_sha256 = i % 5 == 0 ? "" : std::string(64, "0123456789abcdef"[i % 16]);
    c.input_summary = i % 4 == 0 ? every.substr(10, 120) : wide + "\n\t" + std::to_string(i);
    c.began_at_ms = 1764000000000 + i;
    if (i % 3 == 2) {
      c.state = i % 2 ? LedgerCallState::kOutcomeUnknown : LedgerCallState::kStarted;
      ledger.open.push_back(std::move(c));
      continue;
    }
    c.state = LedgerCallState::kCompleted;
    c.ended_at_ms = c.began_at_ms + 250 + i;
    LedgerResult r;
    r.success = i % 4 != 1;
    r.output_summary = i % 2 ? every.substr(0, 127) : "ok " + wide;
    r.duration_ms = 250 + i;
    r.external_id = i % 3 == 1 ? "re_" + std::to_string(i) + "\\x" : "";
    r.reconciled = i % 7 == 0;
    c.result = r;
    ledger.completed.push_back(std::move(c));
  }
  for (Ledger l : {Ledger{}, ledger}) {
    cp.ledger = l;
    auto sealed = Seal(cp);
    ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
    EXPECT_EQ(sealed->canonical, CheckpointToJsonValue(sealed->doc, false).dump());
    EXPECT_EQ(FullDocumentJson(*sealed), CheckpointToJsonValue(sealed->doc, true).dump());
    const std::string member = "\"ledger\":" + LedgerToJsonValue(l).dump();
    EXPECT_NE(sealed->canonical.find(member), std::string::npos);
    auto back = VerifyDocumentJson(FullDocumentJson(*sealed));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, sealed->doc);
  }
  // Strings of every length up to 40 with a character that needs escaping at every offset (the
  // writer scans eight bytes at a time): the same bytes as the library's.
  const std::string specials[] = {"\"",   "\\",   "\n",       std::string(1, '\x01'),
                                  "\x1f", "\x7f", "\xC3\xA9", " "};
  Ledger shifted;
  for (size_t len = 0; len <= 40; ++len) {
    for (size_t at = 0; at < len; at += 3) {
      LedgerCall c = ledger.completed[1];
      c.input_summary = std::string(len, 'x');
      const std::string& special = specials[(len + at) % std::size(specials)];
      c.input_summary.replace(at, 1, special);
      c.result->output_summary = c.input_summary + special + c.input_summary;
      shifted.completed.push_back(std::move(c));
    }
  }
  cp.ledger = shifted;
  auto sealed_shifted = Seal(cp);
  ASSERT_TRUE(sealed_shifted.ok()) << sealed_shifted.status().ToString();
  EXPECT_EQ(sealed_shifted->canonical, CheckpointToJsonValue(sealed_shifted->doc, false).dump());
  // A string that is not UTF-8 (refused by Seal; CanonicalJson takes any document) is written as
  // the library writes it, the bad byte replaced.
  ledger.completed[0].result->output_summary = "bad \xFF byte";
  cp.ledger = ledger;
  const std::string canonical = CanonicalJson(cp);
  EXPECT_NE(
      canonical.find("\"ledger\":" + LedgerToJsonValue(ledger).dump(
                                         -1, ' ', false, nlohmann::json::error_handler_t::replace)),
      std::string::npos);
  EXPECT_NE(canonical.find("bad \xEF\xBF\xBD byte"), std::string::npos);
  EXPECT_FALSE(Seal(cp).ok());
}

}  // namespace
}  // namespace agentckpt
