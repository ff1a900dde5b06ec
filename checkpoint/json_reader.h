// ObjectReader: strict, path-aware field extraction from a parsed JSON object (simdjson DOM).
// Internal to checkpoint/. Never throws; the first error is kept and later reads are no-ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <simdjson.h>

#include "common/status.h"

namespace agentckpt::internal {

class ObjectReader {
 public:
  // A non-object `e` records an error at `path`. `e` must stay valid while the reader is used.
  ObjectReader(simdjson::dom::element e, std::string path);

  // Each returns false (and records the first error) if the field is missing or has the wrong
  // type. `*out` is left unchanged on failure. `key` must be a string literal.
  bool String(const char* key, std::string* out);
  bool Int(const char* key, int64_t min, int64_t max, int64_t* out);
  bool UInt(const char* key, uint64_t* out);
  bool Bool(const char* key, bool* out);
  bool Timestamp(const char* key, int64_t* out);
  bool StringArray(const char* key, std::vector<std::string>* out);
  // The raw member; false if absent (an error unless `optional`).
  bool Member(const char* key, bool optional, simdjson::dom::element* out);

  // Records an error for a member not read so far ("unknown field") or given twice.
  void RejectUnknown();
  std::string FieldPath(std::string_view key) const;
  void Fail(const std::string& field_path, const std::string& reason);
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

 private:
  bool Get(const char* key, simdjson::dom::element* out);
  simdjson::dom::object obj_;
  std::string path_;
  std::vector<const char*> seen_;
  Status status_;
};

// Parses `text` with a per-thread parser. kInvalidArgument if it is not valid JSON or not UTF-8.
// The returned element lives until the next call on the same thread.
StatusOr<simdjson::dom::element> ParseJson(std::string_view text);

}  // namespace agentckpt::internal
