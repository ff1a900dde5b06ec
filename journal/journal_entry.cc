#include "journal/journal_entry.h"

#include <simdjson.h>

#include <nlohmann/json.hpp>

#include "checkpoint/json_value.h"
#include "common/json_string.h"
#include "common/sha256.h"

namespace agentckpt {

const char kJournalGenesisSha256[] =
    "0000000000000000000000000000000000000000000000000000000000000000";

std::string_view JournalKindName(JournalKind kind) {
  switch (kind) {
    case JournalKind::kContextPut:
      return "context.put";
    case JournalKind::kContextPatch:
      return "context.patch";
    case JournalKind::kToolCall:
      return "tool_call";
    case JournalKind::kToolCallBegin:
      return "tool_call.begin";
    case JournalKind::kToolCallEnd:
      return "tool_call.end";
    case JournalKind::kToolCallReconcile:
      return "tool_call.reconcile";
    case JournalKind::kGateRequest:
      return "gate.request";
    case JournalKind::kGateResolve:
      return "gate.resolve";
    case JournalKind::kGateConsume:
      return "gate.consume";
  }
  return "unknown";
}

std::optional<JournalKind> ParseJournalKind(std::string_view name) {
  for (JournalKind k :
       {JournalKind::kContextPut, JournalKind::kContextPatch, JournalKind::kToolCall,
        JournalKind::kToolCallBegin, JournalKind::kToolCallEnd, JournalKind::kToolCallReconcile,
        JournalKind::kGateRequest, JournalKind::kGateResolve, JournalKind::kGateConsume}) {
    if (JournalKindName(k) == name) return k;
  }
  return std::nullopt;
}

namespace {

// The canonical bytes up to the payload (see JournalCanonicalBytes); the payload follows them.
std::string CanonicalHeader(const JournalEntry& e) {
  std::string out = "agentckpt-journal-entry-v1\n";
  out.reserve(out.size() + e.agent_id.size() + 160);
  out += e.agent_id;
  out += '\n';
  out += std::to_string(e.sequence);
  out += '\n';
  out += std::to_string(e.epoch);
  out += '\n';
  out += JournalKindName(e.kind);
  out += '\n';
  out += std::to_string(e.timestamp_ms);
  out += '\n';
  out += e.prev_sha256;
  out += '\n';
  return out;
}

// The digest of the canonical bytes, hashed in two parts so that the payload is not copied
// (restore verifies every entry of the tail; the copy was a tenth of the verification).
std::string CanonicalSha256(const JournalEntry& e) {
  return Sha256HexOfParts({CanonicalHeader(e), e.payload});
}

}  // namespace

std::string JournalCanonicalBytes(const JournalEntry& e) { return CanonicalHeader(e) + e.payload; }

void SealJournalEntry(JournalEntry* e) { e->sha256 = CanonicalSha256(*e); }

Status VerifyJournalEntry(const JournalEntry& e) {
  std::string actual = CanonicalSha256(e);
  if (actual != e.sha256) {
    return DataLossError("journal entry " + std::to_string(e.sequence) +
                         ": sha256 mismatch (stored " + e.sha256.substr(0, 16) + "..., content " +
                         actual.substr(0, 16) + "...)");
  }
  return OkStatus();
}

std::string EncodeJournalEntryWithLibrary(const JournalEntry& e) {
  nlohmann::json j = {{"v", 1},
                      {"agentId", e.agent_id},
                      {"sequence", e.sequence},
                      {"epoch", e.epoch},
                      {"kind", std::string(JournalKindName(e.kind))},
                      {"payload", e.payload},
                      {"timestamp", e.timestamp_ms},
                      {"prevSha256", e.prev_sha256},
                      {"sha256", e.sha256}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Every durable write encodes one entry on the request path, and building the nlohmann::json
// object above (a copy of the payload in a std::map) and escaping it byte by byte was a third of
// the SQLite store's own time per append. The object's shape is fixed, so it is written directly:
// the same bytes as the library's (its keys in their sorted order), which journal_test checks
// against EncodeJournalEntryWithLibrary. A string that is not well-formed UTF-8 (never from the
// sidecar, which validates what it accepts) goes through the library, which replaces the bad bytes.
std::string EncodeJournalEntry(const JournalEntry& e) {
  std::string out;
  // The payload is JSON: its quotes are escaped, about one byte in eight.
  out.reserve(e.payload.size() + e.payload.size() / 4 + e.agent_id.size() + 240);
  out += "{\"agentId\":";
  bool ok = AppendJsonString(e.agent_id, &out);
  out += ",\"epoch\":";
  out += std::to_string(e.epoch);
  out += ",\"kind\":";
  ok = ok && AppendJsonString(JournalKindName(e.kind), &out);
  out += ",\"payload\":";
  ok = ok && AppendJsonString(e.payload, &out);
  out += ",\"prevSha256\":";
  ok = ok && AppendJsonString(e.prev_sha256, &out);
  out += ",\"sequence\":";
  out += std::to_string(e.sequence);
  out += ",\"sha256\":";
  ok = ok && AppendJsonString(e.sha256, &out);
  out += ",\"timestamp\":";
  out += std::to_string(e.timestamp_ms);
  out += ",\"v\":1}";
  return ok ? out : EncodeJournalEntryWithLibrary(e);
}

namespace {

// The stored form's fields, in the order DecodeJournalEntry reports a missing one. string_views,
// so that matching a key compares lengths first instead of measuring a C string each time.
constexpr std::string_view kEntryFields[] = {"v",       "agentId",   "sequence",   "epoch", "kind",
                                             "payload", "timestamp", "prevSha256", "sha256"};
constexpr int kFieldCount = sizeof(kEntryFields) / sizeof(kEntryFields[0]);
enum Field { kV, kAgentId, kSequence, kEpoch, kKind, kPayload, kTimestamp, kPrevSha256, kSha256 };

int FieldIndex(std::string_view key) {
  for (int i = 0; i < kFieldCount; ++i) {
    if (key == kEntryFields[i]) return i;
  }
  return -1;
}

// An integer field: false unless `e` is an integer in [min, INT64_MAX] (a double such as 1.0 is
// not one, as in nlohmann::json's is_number_integer).
bool IntegerOf(simdjson::dom::element e, int64_t min, int64_t* out) {
  int64_t x = 0;
  if (e.get_int64().get(x) || x < min) return false;
  *out = x;
  return true;
}

}  // namespace

StatusOr<JournalEntry> DecodeJournalEntryWithLibrary(std::string_view text) {
  StatusOr<nlohmann::json> parsed = ParseJsonValue(text);
  if (!parsed.ok() || !parsed->is_object()) {
    return DataLossError("journal entry: not a JSON object");
  }
  const nlohmann::json& j = *parsed;
  auto bad = [](const std::string& what) { return DataLossError("journal entry: " + what); };
  if (j.size() != kFieldCount) return bad("unexpected or missing fields");
  for (std::string_view k : kEntryFields) {
    if (!j.contains(k)) return bad("missing " + std::string(k));
  }
  auto integer = [&](const char* k, int64_t min, int64_t* out) -> bool {
    const auto& v = j[k];
    if (!v.is_number_integer()) return false;
    int64_t x = v.get<int64_t>();
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return false;
    }
    if (x < min) return false;
    *out = x;
    return true;
  };
  int64_t version = 0;
  if (!integer("v", 1, &version) || version != 1) return bad("unsupported version");
  JournalEntry e;
  if (!integer("sequence", 1, &e.sequence)) return bad("sequence: expected an integer >= 1");
  if (!integer("epoch", 0, &e.epoch)) return bad("epoch: expected an integer >= 0");
  if (!integer("timestamp", 0, &e.timestamp_ms)) return bad("timestamp: expected an integer");
  for (const char* k : {"agentId", "kind", "payload", "prevSha256", "sha256"}) {
    if (!j[k].is_string()) return bad(std::string(k) + ": expected a string");
  }
  e.agent_id = j["agentId"].get<std::string>();
  if (e.agent_id.empty() || e.agent_id.find('\n') != std::string::npos) return bad("agentId");
  auto kind = ParseJournalKind(j["kind"].get<std::string>());
  if (!kind) return bad("kind: unknown \"" + j["kind"].get<std::string>() + "\"");
  e.kind = *kind;
  e.payload = j["payload"].get<std::string>();
  e.prev_sha256 = j["prevSha256"].get<std::string>();
  e.sha256 = j["sha256"].get<std::string>();
  if (!IsSha256Hex(e.prev_sha256) || !IsSha256Hex(e.sha256))
    return bad("hashes: expected 64 hex digits");
  return e;
}


// Restore decodes every entry of the tail, so this reads simdjson's DOM directly: building an
// nlohmann::json object first (a std::map and a copy of the payload) and then looking each field
// up in it was two fifths of a 1,000-entry restore. It accepts exactly what
// DecodeJournalEntryWithLibrary accepts (a key given twice keeps its last value, as there), which
// the journal entry fuzzer checks.
StatusOr<JournalEntry> DecodeJournalEntry(std::string_view text) {
  auto bad = [](const std::string& what) { return DataLossError("journal entry: " + what); };
  thread_local simdjson::dom::parser parser;  // keeps its buffers between calls
  simdjson::dom::object object;
  if (parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(object)) {
    return bad("not a JSON object");
  }
  simdjson::dom::element fields[kFieldCount];
  unsigned present = 0;
  for (simdjson::dom::key_value_pair member : object) {
    int i = FieldIndex(member.key);
    if (i < 0) return bad("unexpected or missing fields");
    fields[i] = member.value;  // a key given twice: the last one counts
    present |= 1u << i;
  }
  for (int i = 0; i < kFieldCount; ++i) {
    if ((present & (1u << i)) == 0) return bad("missing " + std::string(kEntryFields[i]));
  }
  int64_t version = 0;
  if (!IntegerOf(fields[kV], 1, &version) || version != 1) return bad("unsupported version");
  JournalEntry e;
  if (!IntegerOf(fields[kSequence], 1, &e.sequence)) {
    return bad("sequence: expected an integer >= 1");
  }
  if (!IntegerOf(fields[kEpoch], 0, &e.epoch)) return bad("epoch: expected an integer >= 0");
  if (!IntegerOf(fields[kTimestamp], 0, &e.timestamp_ms)) {
    return bad("timestamp: expected an integer");
  }
  std::string_view strings[kFieldCount];
  for (int i : {kAgentId, kKind, kPayload, kPrevSha256, kSha256}) {
    if (fields[i].get_string().get(strings[i])) {
      return bad(std::string(kEntryFields[i]) + ": expected a string");
    }
  }
  e.agent_id = strings[kAgentId];
  if (e.agent_id.empty() || e.agent_id.find('\n') != std::string::npos) return bad("agentId");
  auto kind = ParseJournalKind(strings[kKind]);
  if (!kind) return bad("kind: unknown \"" + std::string(strings[kKind]) + "\"");
  e.kind = *kind;
  e.payload = strings[kPayload];
  e.prev_sha256 = strings[kPrevSha256];
  e.sha256 = strings[kSha256];
  if (!IsSha256Hex(e.prev_sha256) || !IsSha256Hex(e.sha256)) {
    return bad("hashes: expected 64 hex digits");
  }
  return e;
}

}  // namespace agentckpt
