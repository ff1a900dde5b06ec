// Fuzzes what arrives over NATS: the checkpoint request payload (ParseCreateRequest) and the
// conversion of JetStream messages into replay entries (CutBodyToUtf8, ReplayWindow).
//
// The restore request (agent.{id}.checkpoint.restore) has no payload to parse: the sidecar
// ignores its body, so there is nothing to fuzz there.
//
// Invariants: nothing crashes or leaks; a parsed request has trigger manual or pre_compaction
// and re-encoding it parses back to the same request; a rejection names its field; a cut body is
// well-formed UTF-8 within the byte limit and, for well-formed input, a prefix of it; the window
// keeps at most max_messages entries, each cut to the limit, and counts every message exactly
// once as handled or pending.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/utf8.h"
#include "context/create_request.h"
#include "replay/replay_window.h"

namespace {

using namespace agentckpt;

void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s\n", what);
  std::abort();
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

void FuzzCreateRequest(std::string_view payload) {
  std::string field;
  auto parsed = ParseCreateRequest(payload, &field);
  if (!parsed.ok()) {
    const std::string& m = parsed.status().message();
    Require(parsed.status().code() == StatusCode::kInvalidArgument, "rejection is 400-class");
    Require(StartsWith(m, (field.empty() ? std::string("payload") : field) + ": "),
            "a rejection names its field");
    Require(field.empty() || field == "trigger" || field == "taskId" ||
                StartsWith(m, field + ": unknown field"),
            "only trigger and taskId are known members");
    return;
  }
  Require(
      parsed->trigger == TriggerReason::kManual || parsed->trigger == TriggerReason::kPreCompaction,
      "only manual and pre_compaction are accepted");
  nlohmann::json again = {{"trigger", TriggerReasonName(parsed->trigger)},
                          {"taskId", parsed->task_id}};
  auto reparsed =
      ParseCreateRequest(again.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict));
  Require(
      reparsed.ok() && reparsed->trigger == parsed->trigger && reparsed->task_id == parsed->task_id,
      "a parsed request re-encodes to the same request");
}

void FuzzBodyCut(std::string_view body, size_t max_bytes) {
  std::string cut = CutBodyToUtf8(body, max_bytes);
  Require(cut.size() <= max_bytes, "a cut body respects the byte limit");
  Require(IsValidUtf8(cut), "a cut body is valid UTF-8");
  if (IsValidUtf8(body)) {
    Require(StartsWith(body, cut), "a cut of valid UTF-8 is a prefix");
    Require(body.size() <= max_bytes ? cut == body : body.size() - cut.size() >= 1,
            "a valid body within the limit is kept whole");
    Require(cut.size() + 3 >= std::min(max_bytes, body.size()),
            "a cut of valid UTF-8 drops at most one partial character");
  }
}

// Splits the input into messages: each record is [flags][subject length][subject][body length]
// [body]; sequences increase by (flags & 7) + 1.
void FuzzReplayWindow(std::string_view in, uint64_t ack_floor, size_t max_messages,
                      size_t max_body) {
  ReplayWindow window(ack_floor, max_messages, max_body);
  uint64_t seq = 0;
  uint64_t count = 0;
  uint64_t expect_handled = 0;
  while (in.size() >= 3) {
    uint8_t flags = static_cast<uint8_t>(in[0]);
    size_t subject_len = std::min<size_t>(static_cast<uint8_t>(in[1]) % 32, in.size() - 2);
    std::string_view subject = in.substr(2, subject_len);
    in.remove_prefix(2 + subject_len);
    if (in.empty()) break;
    size_t body_len = std::min<size_t>(static_cast<uint8_t>(in[0]), in.size() - 1);
    std::string_view body = in.substr(1, body_len);
    in.remove_prefix(1 + body_len);
    seq += (flags & 7) + 1;
    window.Add(seq, subject, static_cast<int64_t>(seq) * 1000, body);
    ++count;
    if (seq <= ack_floor) ++expect_handled;
  }
  Require(window.seen() == count, "every message is seen once");
  ReplayResult r = window.TakeResult();
  Require(r.handled_count + r.pending_count == count, "each message is handled or pending");
  Require(r.handled_count == expect_handled, "handled means at or below the ack floor");
  Require(r.messages.size() <= max_messages, "the window keeps at most max_messages");
  Require(r.truncated == count - r.messages.size(), "truncated counts what was left out");
  Require(r.pending_subjects.size() <= ReplayWindow::kMaxPendingSubjects,
          "pending subjects are bounded");
  uint64_t last = 0;
  for (const ReplayedMessage& m : r.messages) {
    Require(m.stream_sequence > last, "kept messages are oldest first");
    last = m.stream_sequence;
    Require(m.data.size() <= max_body, "a kept body respects the byte limit");
    Require(IsValidUtf8(m.data), "a kept body is valid UTF-8");
    Require(m.handled == (m.stream_sequence <= ack_floor), "handled flag matches the ack floor");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  FuzzCreateRequest(text);
  if (size < 3) return 0;
  size_t max_bytes = data[0];
  FuzzBodyCut(text.substr(1), max_bytes);
  FuzzReplayWindow(text.substr(3), data[1] % 64, data[2] % 8 + 1, max_bytes % 64);
  return 0;
}
