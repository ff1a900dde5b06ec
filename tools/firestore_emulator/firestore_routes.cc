#include "tools/firestore_emulator/firestore_routes.h"

#include <cpprest/base_uri.h>

#include <map>
#include <vector>

namespace agentckpt::emulator {
namespace {

using nlohmann::json;

int HttpForCode(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kFailedPrecondition:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kUnauthenticated:
      return 401;
    default:
      return 500;
  }
}

std::vector<std::pair<std::string, std::string>> ParseQuery(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start <= query.size()) {
    size_t amp = query.find('&', start);
    std::string part =
        query.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
    if (!part.empty()) {
      size_t eq = part.find('=');
      std::string k = web::uri::decode(part.substr(0, eq));
      std::string v = eq == std::string::npos ? "" : web::uri::decode(part.substr(eq + 1));
      out.emplace_back(k, v);
    }
    if (amp == std::string::npos) break;
    start = amp + 1;
  }
  return out;
}

// Even number of segments after ".../documents/" names a document, odd a collection.
size_t SegmentsAfterDocuments(const std::string& path) {
  size_t pos = path.find("/documents/");
  if (pos == std::string::npos) return 0;
  size_t n = 1;
  for (size_t i = pos + 11; i < path.size(); ++i) n += path[i] == '/';
  return n;
}

}  // namespace

json ErrorBody(int http_status, const std::string& status_name, const std::string& message) {
  return {{"error", {{"code", http_status}, {"message", message}, {"status", status_name}}}};
}

std::string StatusNameForHttp(int http_status) {
  switch (http_status) {
    case 400:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 409:
      return "ABORTED";
    case 429:
      return "RESOURCE_EXHAUSTED";
    case 500:
      return "INTERNAL";
    case 501:
      return "UNIMPLEMENTED";
    case 503:
      return "UNAVAILABLE";
    case 504:
      return "DEADLINE_EXCEEDED";
    default:
      return "UNKNOWN";
  }
}

RouteReply FirestoreRoutes::Error(const Status& status, const std::string& route) {
  int http = HttpForCode(status.code());
  std::string name(StatusCodeName(status.code()));
  if (status.code() == StatusCode::kInternal) name = "INTERNAL";
  return RouteReply{http, ErrorBody(http, name, status.message()), route};
}

RouteReply FirestoreRoutes::Handle(const std::string& method, const std::string& path,
                                   const std::string& query, const std::string& body_text) {
  json body = json::object();
  if (!body_text.empty()) {
    body = json::parse(body_text, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded() || !body.is_object()) {
      return Error(InvalidArgumentError("Invalid JSON payload received."), "invalid");
    }
  }
  size_t slash = path.rfind('/');
  size_t colon = path.find(':', slash == std::string::npos ? 0 : slash);
  if (colon != std::string::npos) {
    if (method != "POST") return Error(InvalidArgumentError("use POST for " + path), "invalid");
    std::string target = path.substr(0, colon);
    std::string action = path.substr(colon + 1);
    if (action == "commit") return Commit(body);
    if (action == "batchGet") return BatchGet(body);
    if (action == "runQuery") return RunQuery(target, body);
    if (action == "beginTransaction") {
      return RouteReply{200, {{"transaction", "ZW11bGF0b3ItdHJhbnNhY3Rpb24="}}, "beginTransaction"};
    }
    if (action == "rollback") return RouteReply{200, json::object(), "rollback"};
    return Error(NotFoundError("unsupported method :" + action), "unsupported");
  }
  return Document(method, path, query, body);
}

RouteReply FirestoreRoutes::Commit(const json& body) {
  StatusOr<json> result = db_->Commit(body.value("writes", json::array()));
  if (!result.ok()) return Error(result.status(), "commit");
  return RouteReply{200, std::move(result).value(), "commit"};
}

RouteReply FirestoreRoutes::BatchGet(const json& body) {
  json out = json::array();
  std::string read_time = db_->Now();
  for (const json& name : body.value("documents", json::array())) {
    if (!name.is_string())
      return Error(InvalidArgumentError("documents must be names"), "batchGet");
    auto doc = db_->Get(name.get<std::string>());
    if (doc.has_value()) {
      out.push_back({{"found", *doc}, {"readTime", read_time}});
    } else {
      out.push_back({{"missing", name}, {"readTime", read_time}});
    }
  }
  return RouteReply{200, out, "batchGet"};
}

RouteReply FirestoreRoutes::RunQuery(const std::string& parent, const json& body) {
  if (!body.contains("structuredQuery")) {
    return Error(InvalidArgumentError("structuredQuery is required"), "runQuery");
  }
  StatusOr<std::vector<json>> docs = db_->RunQuery(parent, body["structuredQuery"]);
  if (!docs.ok()) return Error(docs.status(), "runQuery");
  json out = json::array();
  std::string read_time = db_->Now();
  for (json& d : *docs) out.push_back({{"document", std::move(d)}, {"readTime", read_time}});
  if (out.empty()) out.push_back({{"readTime", read_time}});
  return RouteReply{200, out, "runQuery"};
}

RouteReply FirestoreRoutes::Document(const std::string& method, const std::string& name,
                                     const std::string& query, const json& body) {
  size_t segments = SegmentsAfterDocuments(name);
  if (segments == 0) return Error(InvalidArgumentError("bad resource name " + name), "invalid");
  if (segments % 2 == 1) {
    if (method != "GET") return Error(InvalidArgumentError("not a document: " + name), "invalid");
    json docs = json::array();
    for (json& d : db_->ListCollection(name)) docs.push_back(std::move(d));
    json out = json::object();
    if (!docs.empty()) out["documents"] = std::move(docs);
    return RouteReply{200, out, "list"};
  }
  json precondition = json::object();
  std::optional<std::vector<std::string>> mask;
  for (const auto& [k, v] : ParseQuery(query)) {
    if (k == "currentDocument.exists") precondition["exists"] = v == "true";
    if (k == "currentDocument.updateTime") precondition["updateTime"] = v;
    if (k == "updateMask.fieldPaths") {
      if (!mask) mask.emplace();
      mask->push_back(v);
    }
  }
  if (method == "GET") {
    auto doc = db_->Get(name);
    if (!doc.has_value())
      return Error(NotFoundError("Document \"" + name + "\" not found."), "get");
    return RouteReply{200, *doc, "get"};
  }
  if (method == "PATCH") {
    StatusOr<json> doc = db_->Patch(name, body.value("fields", json::object()), mask, precondition);
    if (!doc.ok()) return Error(doc.status(), "patch");
    return RouteReply{200, std::move(doc).value(), "patch"};
  }
  if (method == "DELETE") {
    Status s = db_->Delete(name, precondition);
    if (!s.ok()) return Error(s, "delete");
    return RouteReply{200, json::object(), "delete"};
  }
  return Error(InvalidArgumentError("unsupported HTTP method " + method), "invalid");
}

}  // namespace agentckpt::emulator
