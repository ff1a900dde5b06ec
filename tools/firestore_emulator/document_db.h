// DocumentDb: the emulator's in-memory Firestore database (all projects and databases).
//
// Documents are keyed by their full resource name ("projects/p/databases/d/documents/c/id").
// Values are kept in Firestore's REST JSON form. Commits are atomic: every precondition is
// checked before any write is applied, and all writes of a commit share one commit time.
// Times are microseconds since the epoch, strictly increasing across commits.
// Errors use agentckpt::Status; the server maps the codes to Firestore's (kAlreadyExists ->
// ALREADY_EXISTS 409, kFailedPrecondition -> FAILED_PRECONDITION 400, kNotFound -> NOT_FOUND
// 404, kInvalidArgument -> INVALID_ARGUMENT 400). Thread-safe (one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace agentckpt::emulator {

class DocumentDb {
 public:
  // The document as REST JSON {name, fields, createTime, updateTime}, or nullopt.
  std::optional<nlohmann::json> Get(const std::string& name);
  // Documents directly in the collection `collection_name`, ordered by name.
  std::vector<nlohmann::json> ListCollection(const std::string& collection_name);
  // Applies a CommitRequest's "writes"; returns {writeResults, commitTime}.
  StatusOr<nlohmann::json> Commit(const nlohmann::json& writes);
  // documents.patch: `mask` lists the field paths to change (all fields when absent);
  // `precondition` is a Precondition object or null. Returns the stored document.
  StatusOr<nlohmann::json> Patch(const std::string& name, const nlohmann::json& fields,
                                 const std::optional<std::vector<std::string>>& mask,
                                 const nlohmann::json& precondition);
  // documents.delete with an optional precondition.
  Status Delete(const std::string& name, const nlohmann::json& precondition);
  // :runQuery with `parent` (a documents root or a document) and a StructuredQuery; returns the
  // matching documents in query order.
  StatusOr<std::vector<nlohmann::json>> RunQuery(const std::string& parent,
                                                 const nlohmann::json& query);
  // Deletes every document whose name starts with `prefix`.
  void Clear(const std::string& prefix);
  // The current time as RFC 3339 with microseconds (for readTime).
  std::string Now();
  // Writes applied per document (updates and deletes of committed writes) since the last
  // ResetWriteCounts: {"documents": how many were written, "writes": total, "hottest": {"name",
  // "writes"}} for the document written most often (the per-document write rate a client must
  // keep low, see docs/journal.md).
  nlohmann::json WriteCounts();
  void ResetWriteCounts();

 private:
  struct Doc {
    nlohmann::json fields = nlohmann::json::object();
    int64_t create_us = 0;
    int64_t update_us = 0;
  };
  static nlohmann::json ToJson(const std::string& name, const Doc& doc);
  int64_t NextCommitMicrosLocked();
  static Status CheckPrecondition(const std::string& name, const Doc* doc,
                                  const nlohmann::json& precondition);
  Status ApplyWriteLocked(const nlohmann::json& write, int64_t commit_us,
                          std::map<std::string, Doc>* staged, nlohmann::json* result);

  std::mutex mu_;
  std::map<std::string, Doc> docs_;
  std::map<std::string, uint64_t> writes_by_doc_;
  int64_t last_commit_us_ = 0;
};

// Value helpers shared by queries and transforms.
// Firestore's cross-type ordering: null < boolean < number < timestamp < string < bytes <
// reference < geoPoint < array < map; within a type the natural order.
int CompareValues(const nlohmann::json& a, const nlohmann::json& b);
// Splits "a.b.`c d`" into {"a", "b", "c d"}.
std::vector<std::string> SplitFieldPath(const std::string& path);
// The value at `path` in a fields map, or null if absent.
const nlohmann::json* FindField(const nlohmann::json& fields, const std::string& path);

}  // namespace agentckpt::emulator
