// CanonicalWriter: writes a checkpoint straight from its C++ form into the canonical JSON of
// docs/checkpoint-format.md (sorted keys, no spaces, RFC 8785 string escaping), without building
// a JSON tree. Internal to checkpoint/; byte-identical to nlohmann::json::dump of
// CheckpointToJsonValue (tests/checkpoint/canonical_test.cc holds the two to that).
#pragma once

#include <string>

#include "checkpoint/checkpoint.h"

namespace agentckpt::internal {

// Appends the canonical JSON of `cp` to `out`. contentSha256 is written only if `include_hash`
// and it is non-empty. If `size_pos` is non-null, the sizeBytes value is NOT written and
// *size_pos receives the offset in `out` where its digits belong.
void WriteCanonicalJson(const Checkpoint& cp, bool include_hash, std::string* out,
                        size_t* size_pos);

}  // namespace agentckpt::internal
