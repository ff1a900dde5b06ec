// Canonical serialization and SHA-256 integrity of checkpoint documents
// (docs/checkpoint-format.md).
//
// The canonical form is the document as JSON with object keys sorted by byte order, no
// insignificant whitespace, integers in plain decimal, strings as raw UTF-8 with only '"', '\'
// and control characters escaped (RFC 8785 for a document holding only integers), and the
// contentSha256 member left out. contentSha256 is the lower-case hex SHA-256 of those bytes.
// All functions are thread-safe and never throw.
#pragma once

#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"
#include "common/status.h"

namespace agentckpt {

// A checkpoint with its integrity hash and canonical bytes (which hash to doc.content_sha256).
struct SealedCheckpoint {
  Checkpoint doc;
  std::string canonical;  // canonical JSON without contentSha256
};

// The canonical form of `cp` (contentSha256 left out whatever its value).
std::string CanonicalJson(const Checkpoint& cp);

// Normalizes `cp` (cut rules), sets expireAt = timestamp + ttlDays and sizeBytes (the byte length
// of the full document's canonical JSON with contentSha256 included), validates it and computes
// contentSha256. kInvalidArgument naming the field if the document breaks the schema.
StatusOr<SealedCheckpoint> Seal(Checkpoint cp);

// Opens a stored checkpoint from its canonical bytes and hash: kDataLoss if the bytes do not
// hash to `sha256_hex`, do not parse, or do not satisfy the schema (a stored document that fails
// validation is corrupted); kFailedPrecondition if it has a newer schema version.
StatusOr<Checkpoint> OpenSealed(std::string_view canonical, std::string_view sha256_hex);

// Verifies a full JSON document that carries its own contentSha256 (e.g. an export or a document
// read from Firestore and converted to JSON): recomputes the canonical form of everything but
// contentSha256, whatever the input's key order or spacing, and compares. kDataLoss on mismatch,
// missing hash or unparsable input.
StatusOr<Checkpoint> VerifyDocumentJson(std::string_view document_json);

// The full document (canonical key order, contentSha256 included) as stored or exported.
std::string FullDocumentJson(const SealedCheckpoint& sealed);

}  // namespace agentckpt
