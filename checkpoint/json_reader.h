// ObjectReader: strict, path-aware field extraction from a nlohmann::json object. Internal to
// checkpoint/. Never throws; the first error is kept and later reads are no-ops.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace agentckpt::internal {

class ObjectReader {
 public:
  // `j` must outlive the reader. A non-object `j` records an error at `path`.
  ObjectReader(const nlohmann::json& j, std::string path);

  // Each returns false (and records the first error) if the field is missing (unless optional)
  // or has the wrong type. `*out` is left unchanged on failure.
  bool String(const char* key, std::string* out);
  bool Int(const char* key, int64_t min, int64_t max, int64_t* out);
  bool UInt(const char* key, uint64_t* out);
  bool Bool(const char* key, bool* out);
  bool Timestamp(const char* key, int64_t* out);
  bool StringArray(const char* key, std::vector<std::string>* out);
  // The raw member: nullptr if absent (records an error unless `optional`).
  const nlohmann::json* Member(const char* key, bool optional);

  // Records an error for any member not read so far ("unknown field").
  void RejectUnknown();
  std::string FieldPath(const char* key) const;
  void Fail(const std::string& field_path, const std::string& reason);
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

 private:
  const nlohmann::json* Get(const char* key);
  const nlohmann::json& j_;
  std::string path_;
  std::set<std::string> seen_;
  Status status_;
};

}  // namespace agentckpt::internal
