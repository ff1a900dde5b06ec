// The journal's entry format, hash chain and fold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "checkpoint/checkpoint_json.h"
#include "journal/journal_entry.h"
#include "journal/journal_fold.h"

namespace agentckpt {
namespace {

using nlohmann::json;

// Builds a chain of entries for agent "a" after `prev`.
class Chain {
 public:
  explicit Chain(JournalPosition at = {0, kJournalGenesisSha256}) : at_(std::move(at)) {}
  JournalEntry Add(JournalKind kind, const json& payload) {
    JournalEntry e;
    e.agent_id = "a";
    e.sequence = at_.sequence + 1;
    e.epoch = 3;
    e.kind = kind;
    e.payload = payload.dump();
    e.timestamp_ms = 1700000000000 + e.sequence;
    e.prev_sha256 = at_.sha256;
    SealJournalEntry(&e);
    at_ = {e.sequence, e.sha256};
    entries.push_back(e);
    return e;
  }
  std::vector<JournalEntry> entries;

 private:
  JournalPosition at_;
};

Checkpoint Base() {
  Checkpoint cp;
  cp.agent_id = "a";
  cp.context_summary.gathering_results = "start";
  cp.context_summary.completed_steps = 1;
  return cp;
}

json ToolCall(const std::string& name) {
  return {{"toolName", name},    {"timestamp", "2026-01-01T00:00:00.000Z"},
          {"inputSummary", "i"}, {"outputSummary", "o"},
          {"durationMs", 5},     {"success", true}};
}

// The stored form is written directly (journal_entry.cc); the library's encoding of the same
// object is the reference, byte for byte, for every kind and for payloads that need escaping.
TEST(JournalEntryTest, TheStoredFormIsTheLibrarysEncodingByteForByte) {
  Chain c;
  const std::vector<json> payloads = {
      json::object(),
      {{"contextSummary", {{"draftContent", "quote \" backslash \\ slash / tab \t nl \n"}}}},
      {{"contextSummary", {{"draftContent", std::string("ctl \x01\x08\x0c\x0d\x1f\x7f end")}}}},
      {{"contextSummary", {{"draftContent", "CJK \u4e2d\u6587, emoji \U0001F600, BOM \ufeff"}}}},
      ToolCall("search \"quoted\""),
  };
  int kind = 0;
  for (const json& p : payloads) {
    for (int k = 0; k < 9; ++k, ++kind) {
      JournalEntry e = c.Add(static_cast<JournalKind>(kind % 9), p);
      EXPECT_EQ(EncodeJournalEntry(e), EncodeJournalEntryWithLibrary(e)) << e.payload;
    }
  }
  JournalEntry big = c.Add(JournalKind::kContextPut, json::object());
  big.sequence = INT64_MAX;
  big.epoch = -1;
  big.timestamp_ms = INT64_MIN;
  EXPECT_EQ(EncodeJournalEntry(big), EncodeJournalEntryWithLibrary(big));
  // Not well-formed UTF-8: the library's encoding (the bad byte replaced), which still decodes.
  JournalEntry bad = c.Add(JournalKind::kContextPatch, json::object());
  bad.payload = "{\"x\":\"a\xff\"}";
  EXPECT_EQ(EncodeJournalEntry(bad), EncodeJournalEntryWithLibrary(bad));
  auto back = DecodeJournalEntry(EncodeJournalEntry(bad));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->payload, "{\"x\":\"a\xef\xbf\xbd\"}");
}

TEST(JournalEntryTest, SealVerifyEncodeDecodeRoundTrip) {
  Chain c;
  JournalEntry e = c.Add(JournalKind::kContextPatch, {{"contextSummary", {{"completedSteps", 2}}}});
  EXPECT_TRUE(VerifyJournalEntry(e).ok());
  auto back = DecodeJournalEntry(EncodeJournalEntry(e));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, e);
  JournalEntry tampered = e;
  tampered.payload[3] ^= 1;
  EXPECT_EQ(VerifyJournalEntry(tampered).code(), StatusCode::kDataLoss);
  tampered = e;
  tampered.epoch = 4;  // every field is covered
  EXPECT_FALSE(VerifyJournalEntry(tampered).ok());
}

// The digest of docs/checkpoint-format.md's canonical bytes, computed outside the project
// (Python's hashlib over the bytes the format document lists), so that a stored journal keeps
// verifying whatever the code that hashes it becomes.
TEST(JournalEntryTest, TheDigestIsTheFormatDocumentsCanonicalBytes) {
  JournalEntry e;
  e.agent_id = "agent-7";
  e.sequence = 42;
  e.epoch = 3;
  e.kind = JournalKind::kContextPatch;
  e.timestamp_ms = 1700000000123;
  e.prev_sha256 = kJournalGenesisSha256;
  e.payload = R"({"contextSummary":{"completedSteps":5}})";
  SealJournalEntry(&e);
  EXPECT_EQ(e.sha256, "3dc69f2c25ebdb7c0f7b843c4030fa1b82311a4df80320331edc521dfc1eb198");
  EXPECT_TRUE(VerifyJournalEntry(e).ok());
  EXPECT_EQ(JournalCanonicalBytes(e),
            "agentckpt-journal-entry-v1\nagent-7\n42\n3\ncontext.patch\n1700000000123\n" +
                std::string(64, '0') + "\n" + e.payload);
}

TEST(JournalEntryTest, DecodeRejectsMalformedEntries) {
  Chain c;
  json good = json::parse(EncodeJournalEntry(c.Add(JournalKind::kToolCall, ToolCall("t"))));
  for (const char* key : {"v", "agentId", "sequence", "epoch", "kind", "payload", "timestamp",
                          "prevSha256", "sha256"}) {
    json j = good;
    j.erase(key);
    EXPECT_EQ(DecodeJournalEntry(j.dump()).status().code(), StatusCode::kDataLoss) << key;
  }
  json j = good;
  j["kind"] = "ledger.unknown";
  EXPECT_FALSE(DecodeJournalEntry(j.dump()).ok());
  j = good;
  j["sequence"] = 0;
  EXPECT_FALSE(DecodeJournalEntry(j.dump()).ok());
  j = good;
  j["extra"] = 1;
  EXPECT_FALSE(DecodeJournalEntry(j.dump()).ok());
  j = good;
  j["sha256"] = "XYZ";
  EXPECT_FALSE(DecodeJournalEntry(j.dump()).ok());
  EXPECT_FALSE(DecodeJournalEntry("").ok());
  EXPECT_FALSE(
      DecodeJournalEntry(std::string(EncodeJournalEntry(c.entries[0])).substr(0, 40)).ok());
}

TEST(JournalEntryTest, DecodeAcceptsExactlyWhatTheLibraryDecodeAccepts) {
  Chain c;
  const std::string good = EncodeJournalEntry(c.Add(JournalKind::kToolCall, ToolCall("t")));
  auto with = [&](const std::string& key, const std::string& value) {
    json j = json::parse(good);
    j.erase(key);
    std::string text = j.dump();
    text.insert(1, "\"" + key + "\":" + value + ",");
    return text;
  };
  std::vector<std::string> cases = {
      good,
      with("sequence", "1.0"),
      with("sequence", "18446744073709551615"),
      with("sequence", "9223372036854775807"),
      with("epoch", "-1"),
      with("timestamp", "0"),
      with("v", "2"),
      with("kind", "\"gate.consume\""),
      with("agentId", "\"a\\nb\""),
      with("agentId", "\"\""),
      with("prevSha256", "\"" + std::string(64, 'A') + "\""),
      with("payload", "{}"),
      // A key given twice: the last value counts, in both decoders.
      "{\"sequence\":\"x\"," + good.substr(1),
      "{\"sequence\":7," + good.substr(1),
      good.substr(0, good.size() - 1) + ",\"sequence\":\"x\"}",
      good.substr(0, good.size() - 1) + ",\"sequence\":9}",
      good.substr(0, good.size() - 1) + ",\"extra\":1}",
      "[]",
      "{}",
      good.substr(0, good.size() - 2),
  };
  int accepted = 0;
  for (const std::string& text : cases) {
    auto fast = DecodeJournalEntry(text);
    auto library = DecodeJournalEntryWithLibrary(text);
    ASSERT_EQ(fast.ok(), library.ok()) << text;
    if (!fast.ok()) {
      EXPECT_EQ(fast.status().code(), StatusCode::kDataLoss) << text;
      continue;
    }
    EXPECT_EQ(*fast, *library) << text;
    ++accepted;
  }
  EXPECT_EQ(accepted, 7);  // good, the max sequence, timestamp 0, gate.consume and three twice
  EXPECT_EQ(DecodeJournalEntry(cases[15])->sequence, 9);
}

TEST(JournalFoldTest, MergePatchDiffReproducesTheAfterState) {
  json before = ContextJsonOf(Base());
  Checkpoint next = Base();
  next.context_summary.plan_outline = {"x", "y"};
  next.active_task = ActiveTask{"t-1", "title", TaskPhase::kPlanning, 10, 0};
  json after = ContextJsonOf(next);
  json patched = before;
  patched.merge_patch(MakeMergePatch(before, after));
  EXPECT_EQ(patched, after);
  // Back to null: the key goes, and the context form reads it as null.
  json patch = MakeMergePatch(after, before);
  EXPECT_TRUE(patch["activeTask"].is_null());
}

TEST(JournalFoldTest, FoldsEachKindInOrder) {
  Checkpoint cp = Base();
  Chain c;
  Checkpoint put = Base();
  put.context_summary.draft_content = "draft";
  c.Add(JournalKind::kContextPut, ContextJsonOf(put));
  c.Add(JournalKind::kContextPatch, {{"contextSummary", {{"completedSteps", 7}}}});
  for (int i = 0; i < 55; ++i) c.Add(JournalKind::kToolCall, ToolCall("t" + std::to_string(i)));
  JournalFoldReport r = FoldJournal(c.entries, &cp);
  EXPECT_FALSE(r.stopped) << r.stop_reason;
  EXPECT_EQ(r.applied, 57);
  EXPECT_EQ(r.last_sequence, 57);
  EXPECT_EQ(cp.context_summary.draft_content, "draft");
  EXPECT_EQ(cp.context_summary.completed_steps, 7);
  ASSERT_EQ(cp.context_summary.tool_call_log.size(), 50u);  // newest 50 kept
  EXPECT_EQ(cp.context_summary.tool_call_log.back().tool_name, "t54");
  ASSERT_TRUE(cp.journal.has_value());
  EXPECT_EQ(cp.journal->sequence, 57);
  EXPECT_EQ(cp.journal->sha256, c.entries.back().sha256);
}

TEST(JournalFoldTest, StartsAfterTheCheckpointsPositionAndNeedsItsLink) {
  Chain c;
  c.Add(JournalKind::kContextPatch, {{"contextSummary", {{"completedSteps", 2}}}});
  c.Add(JournalKind::kContextPatch, {{"contextSummary", {{"completedSteps", 3}}}});
  Checkpoint cp = Base();
  cp.journal = JournalPosition{1, c.entries[0].sha256};
  JournalFoldReport r = FoldJournal(c.entries, &cp);  // entry 1 is in the checkpoint already
  EXPECT_EQ(r.applied, 1);
  EXPECT_EQ(cp.context_summary.completed_steps, 3);

  Checkpoint wrong = Base();
  wrong.journal = JournalPosition{1, std::string(64, 'a')};  // does not link
  r = FoldJournal(c.entries, &wrong);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.applied, 0);
  EXPECT_EQ(r.stopped_at, 2);
  EXPECT_EQ(wrong.context_summary.completed_steps, 1);
}

TEST(JournalFoldTest, StopsAtTheFirstDamagedTornOrMissingEntry) {
  for (int damage = 0; damage < 4; ++damage) {
    Chain c;
    for (int i = 1; i <= 5; ++i)
      c.Add(JournalKind::kContextPatch, {{"contextSummary", {{"completedSteps", i}}}});
    std::vector<JournalEntry> entries = c.entries;
    if (damage == 0)
      entries[3].payload = "{\"contextSummary\":{\"completedSteps\":99}}";  // tampered
    if (damage == 1) entries[3].sha256.clear();           // torn (undecodable row)
    if (damage == 2) entries.erase(entries.begin() + 3);  // missing
    if (damage == 3) entries[3].agent_id = "b";           // another agent's
    Checkpoint cp = Base();
    JournalFoldReport r = FoldJournal(entries, &cp);
    EXPECT_TRUE(r.stopped) << damage;
    EXPECT_EQ(r.applied, 3) << damage;
    EXPECT_EQ(r.stopped_at, 4) << damage;
    EXPECT_EQ(r.last_sequence, 3);
    EXPECT_EQ(cp.context_summary.completed_steps, 3) << damage;
    EXPECT_FALSE(r.stop_reason.empty());
  }
}

// A tail long enough that its digests are checked on two threads (journal_fold.cc): a tampered
// entry stops the fold at itself wherever it lies, in either half, after a checkpoint that
// already includes part of the tail; with two, the earlier one counts.
TEST(JournalFoldTest, ALongTailStopsAtItsFirstTamperedEntryInEitherHalf) {
  Chain c;
  for (int i = 1; i <= 400; ++i)
    c.Add(JournalKind::kContextPatch, {{"contextSummary", {{"completedSteps", i}}}});
  const std::vector<std::vector<int>> cases = {{}, {60}, {300}, {400}, {300, 101}};
  for (const std::vector<int>& tampered : cases) {
    std::vector<JournalEntry> entries = c.entries;
    for (int seq : tampered) {
      entries[seq - 1].payload = "{\"contextSummary\":{\"completedSteps\":-1}}";
    }
    Checkpoint cp = Base();
    cp.journal = JournalPosition{50, c.entries[49].sha256};
    JournalFoldReport r = FoldJournal(entries, &cp);
    const int stop = tampered.empty() ? 0 : *std::min_element(tampered.begin(), tampered.end());
    SCOPED_TRACE(stop);
    EXPECT_EQ(r.stopped, stop != 0);
    EXPECT_EQ(r.applied, stop != 0 ? stop - 51 : 350);
    EXPECT_EQ(r.last_sequence, stop != 0 ? stop - 1 : 400);
    EXPECT_EQ(cp.context_summary.completed_steps, stop != 0 ? stop - 1 : 400);
    if (stop != 0) {
      EXPECT_EQ(r.stopped_at, stop);
      EXPECT_EQ(r.not_applied, 400 - stop + 1);
      EXPECT_NE(r.stop_reason.find("sha256 mismatch"), std::string::npos) << r.stop_reason;
    }
  }
}

TEST(JournalFoldTest, AnEntryThatDoesNotApplyStopsTheFold) {
  Chain c;
  c.Add(JournalKind::kContextPatch, {{"contextSummary", {{"completedSteps", 2}}}});
  c.Add(JournalKind::kContextPut, {{"activeTask", nullptr}});  // no contextSummary
  Checkpoint cp = Base();
  JournalFoldReport r = FoldJournal(c.entries, &cp);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.applied, 1);
  EXPECT_EQ(cp.context_summary.completed_steps, 2);
}

}  // namespace
}  // namespace agentckpt
