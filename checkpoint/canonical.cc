#include "checkpoint/canonical.h"

#include <nlohmann/json.hpp>

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
  try {
    return Dump(CheckpointToJsonValue(cp, /*include_hash=*/false));
  } catch (const std::exception&) {
    return std::string();  // only on invalid UTF-8, which validation rejects before sealing
  }
}

StatusOr<SealedCheckpoint> Seal(Checkpoint cp) {
  NormalizeContextSummary(&cp.context_summary);
  cp.expire_at_ms = cp.timestamp_ms + static_cast<int64_t>(cp.ttl_days) * kMillisPerDay;
  cp.content_sha256.clear();
  cp.size_bytes = 0;
  if (Status s = ValidateCheckpoint(cp); !s.ok()) return s;
  try {
    json j = CheckpointToJsonValue(cp, /*include_hash=*/false);
    // Length with sizeBytes = 0 is base + 1; the full document is base + digits + hash member.
    int64_t base = static_cast<int64_t>(Dump(j).size()) - 1 + kHashMemberBytes;
    int64_t size = base + 1;
    while (Digits(size) != size - base) size = base + Digits(size);
    cp.size_bytes = size;
    j["sizeBytes"] = size;
    SealedCheckpoint out;
    out.canonical = Dump(j);
    cp.content_sha256 = Sha256Hex(out.canonical);
    out.doc = std::move(cp);
    return out;
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("document: cannot serialize: ") + e.what());
  }
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
  return CheckpointToJson(sealed.doc);
}

}  // namespace agentckpt
