#include "checkpoint/canonical.h"

#include <nlohmann/json.hpp>

#include "checkpoint/canonical_writer.h"
#include "checkpoint/checkpoint_json.h"
#include "common/sha256.h"

namespace agentckpt {
namespace {

using json = nlohmann::json;
constexpr int64_t kMillisPerDay = 86400000;
// "contentSha256":"<64 hex>", -- the member the canonical form leaves out, with its comma.
constexpr int64_t kHashMemberBytes = 16 + 66 + 1;

std::string Dump(const json& j) {
  // The document has been validated as UTF-8, so the replace handler never fires for documents
  // built here; it keeps dump() from throwing on foreign input.
  return j.dump(-1, ' ', false, json::error_handler_t::strict);
}

int Digits(int64_t v) {
  int d = 1;
  while (v >= 10) {
    v /= 10;
    ++d;
  }
  return d;
}

}  // namespace

std::string CanonicalJson(const Checkpoint& cp) {
  std::string out;
  out.reserve(4096);
  internal::WriteCanonicalJson(cp, /*include_hash=*/false, &out, nullptr);
  return out;
}

StatusOr<SealedCheckpoint> Seal(Checkpoint cp) {
  NormalizeContextSummary(&cp.context_summary);
  cp.expire_at_ms = cp.timestamp_ms + static_cast<int64_t>(cp.ttl_days) * kMillisPerDay;
  cp.content_sha256.clear();
  cp.size_bytes = 0;
  if (Status s = ValidateCheckpoint(cp); !s.ok()) return s;
  SealedCheckpoint out;
  out.canonical.reserve(
      static_cast<size_t>(cp.context_summary.draft_content.size() +
                          cp.context_summary.gathering_results.size()) +
      cp.context_summary.tool_call_log.size() * 900 +
      (cp.ledger ? (cp.ledger->open.size() + cp.ledger->completed.size()) * 1100 : 0) +
      cp.gates.size() + 4096);
  size_t size_pos = 0;
  internal::WriteCanonicalJson(cp, /*include_hash=*/false, &out.canonical, &size_pos);
  // The full document is the canonical form plus the hash member plus sizeBytes' own digits.
  int64_t base = static_cast<int64_t>(out.canonical.size()) + kHashMemberBytes;
  int64_t size = base + 1;
  while (Digits(size) != size - base) size = base + Digits(size);
  cp.size_bytes = size;
  out.canonical.insert(size_pos, std::to_string(size));
  cp.content_sha256 = Sha256Hex(out.canonical);
  out.doc = std::move(cp);
  return out;
}

StatusOr<Checkpoint> OpenSealed(std::string_view canonical, std::string_view sha256_hex) {
  if (Sha256Hex(canonical) != sha256_hex) {
    return DataLossError("contentSha256 mismatch: the stored document was changed or damaged");
  }
  StatusOr<Checkpoint> cp = CheckpointFromJson(canonical);
  if (!cp.ok()) {
    if (cp.status().code() == StatusCode::kFailedPrecondition) return cp.status();
    return DataLossError("stored document does not decode: " + cp.status().message());
  }
  if (Status s = ValidateCheckpoint(*cp); !s.ok()) {
    return DataLossError("stored document breaks the schema: " + s.message());
  }
  cp->content_sha256 = std::string(sha256_hex);
  return cp;
}

StatusOr<Checkpoint> VerifyDocumentJson(std::string_view document_json) {
  json j = json::parse(document_json.begin(), document_json.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return DataLossError("document is not a JSON object");
  auto it = j.find("contentSha256");
  if (it == j.end() || !it->is_string()) return DataLossError("document has no contentSha256");
  std::string expected = it->get<std::string>();
  j.erase(it);
  std::string canonical;
  try {
    canonical = Dump(j);
  } catch (const std::exception& e) {
    return DataLossError(std::string("document cannot be canonicalized: ") + e.what());
  }
  return OpenSealed(canonical, expected);
}

std::string FullDocumentJson(const SealedCheckpoint& sealed) {
  std::string out;
  out.reserve(sealed.canonical.size() + kHashMemberBytes);
  internal::WriteCanonicalJson(sealed.doc, /*include_hash=*/true, &out, nullptr);
  return out;
}

}  // namespace agentckpt
