// Firestore's typed values (REST v1 JSON) and the checkpoint document's layout in them.
//
// A plain JSON value maps to a Firestore Value as follows: string -> stringValue (or
// timestampValue when its object key is one of the timestamp keys below), integer ->
// integerValue as a decimal string, boolean -> booleanValue, null -> nullValue, array ->
// arrayValue.values, object -> mapValue.fields. The reverse mapping writes every
// timestampValue back as RFC 3339 UTC with exactly three fraction digits and 'Z', which is the
// form the checkpoint's integrity hash covers, so a document read from Firestore verifies
// byte for byte. All functions are thread-safe and never throw.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "checkpoint/canonical.h"
#include "common/status.h"

namespace agentckpt {

// True for the object keys whose string values are timestamps in checkpoint and agent
// documents: timestamp, startedAt, expireAt, updatedAt.
bool IsTimestampKey(std::string_view key);

// Encodes a JSON value as a Firestore Value. `key` is the object key the value sits under (""
// for array elements and the root). kInvalidArgument for a timestamp key whose value is not
// RFC 3339, or a floating-point number (the checkpoint schema has none).
StatusOr<nlohmann::json> JsonToFirestoreValue(const nlohmann::json& value, std::string_view key);
// Encodes a JSON object as a Firestore "fields" map.
StatusOr<nlohmann::json> JsonToFirestoreFields(const nlohmann::json& object);

// Decodes a Firestore Value to plain JSON (see above). kInvalidArgument naming `path` for an
// unknown or malformed value.
StatusOr<nlohmann::json> FirestoreValueToJson(const nlohmann::json& value, const std::string& path);
// Decodes a "fields" map (a missing map is an empty object).
StatusOr<nlohmann::json> FirestoreFieldsToJson(const nlohmann::json& fields,
                                               const std::string& path);

// The Firestore fields of a sealed checkpoint: every document field plus contentSha256.
StatusOr<nlohmann::json> CheckpointToFirestoreFields(const SealedCheckpoint& sealed);
// Turns a snapshot document's fields back into the checkpoint's JSON and verifies its
// contentSha256 (VerifyDocumentJson). kDataLoss if the fields do not decode, do not form a
// valid checkpoint, or do not hash to contentSha256.
StatusOr<Checkpoint> CheckpointFromFirestoreFields(const nlohmann::json& fields);

// Firestore's own timestamps (updateTime, commitTime) carry microseconds or nanoseconds.
// Parses RFC 3339 into microseconds since the epoch (nanoseconds truncated). kInvalidArgument.
StatusOr<int64_t> ParseRfc3339Micros(std::string_view text);
// Formats microseconds since the epoch as "YYYY-MM-DDTHH:MM:SS.ffffffZ".
std::string FormatRfc3339Micros(int64_t unix_micros);

}  // namespace agentckpt
