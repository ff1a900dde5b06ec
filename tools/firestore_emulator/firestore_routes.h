// FirestoreRoutes: the REST v1 request handlers of the emulator, independent of the HTTP
// server. Thread-safe (state lives in the DocumentDb).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "tools/firestore_emulator/document_db.h"

namespace agentckpt::emulator {

struct RouteReply {
  int http_status = 200;
  nlohmann::json body;
  std::string route;  // "get", "patch", "delete", "list", "commit", "batchGet", "runQuery", ...
};

// {"error": {"code": http_status, "message": message, "status": status_name}}.
nlohmann::json ErrorBody(int http_status, const std::string& status_name,
                         const std::string& message);
// The canonical Firestore status name for an HTTP status (503 -> "UNAVAILABLE", ...).
std::string StatusNameForHttp(int http_status);

class FirestoreRoutes {
 public:
  explicit FirestoreRoutes(DocumentDb* db) : db_(db) {}
  // `path` is the decoded URI path after "/v1/" (e.g. "projects/p/databases/d/documents:commit"),
  // `query` the raw query string.
  RouteReply Handle(const std::string& method, const std::string& path, const std::string& query,
                    const std::string& body);

 private:
  RouteReply Error(const Status& status, const std::string& route);
  RouteReply Commit(const nlohmann::json& body);
  RouteReply BatchGet(const nlohmann::json& body);
  RouteReply RunQuery(const std::string& parent, const nlohmann::json& body);
  RouteReply Document(const std::string& method, const std::string& name, const std::string& query,
                      const nlohmann::json& body);

  DocumentDb* db_;
};

}  // namespace agentckpt::emulator
