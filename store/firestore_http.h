// HTTP for the Firestore store: one-shot requests over cpprestsdk, and FirestoreHttp, which
// calls the Firestore REST v1 API with a per-request timeout, retries with exponential backoff
// and jitter, and an overall deadline. Time and randomness come from the Env seam.
//
// Nothing here throws: cpprestsdk exceptions become kUnavailable (connection errors) or
// kDeadlineExceeded (timeouts). No header value (tokens) is ever logged.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/env.h"
#include "common/status.h"

namespace agentckpt {

class TokenSource;

struct HttpReply {
  int status = 0;
  std::string body;
};

// Sends one request to an absolute URL and returns whatever HTTP status came back. kUnavailable
// if the connection fails, kDeadlineExceeded after `timeout_ms`. Thread-safe.
StatusOr<HttpReply> HttpOnce(const std::string& method, const std::string& url,
                             const std::map<std::string, std::string>& headers,
                             const std::string& body, const std::string& content_type,
                             int64_t timeout_ms);

// Turns a Firestore error reply ({"error":{"code","message","status"}}) into a Status whose
// message carries the HTTP status, the canonical status name and Firestore's message:
// ALREADY_EXISTS -> kAlreadyExists, FAILED_PRECONDITION -> kFailedPrecondition, NOT_FOUND ->
// kNotFound, INVALID_ARGUMENT -> kInvalidArgument, UNAVAILABLE/ABORTED -> kUnavailable,
// DEADLINE_EXCEEDED -> kDeadlineExceeded, RESOURCE_EXHAUSTED -> kResourceExhausted,
// PERMISSION_DENIED / UNAUTHENTICATED -> the same; anything else kInternal. When the body has
// no error object the HTTP status decides.
Status FirestoreErrorStatus(int http_status, const std::string& body);

// True for the replies worth retrying: HTTP 429, 500, 502, 503, 504 (and ABORTED).
bool IsRetryableHttpStatus(int http_status, const std::string& body);

struct FirestoreHttpOptions {
  std::string base_url;           // "https://firestore.googleapis.com" or "http://host:port"
  TokenSource* tokens = nullptr;  // null: no Authorization header (emulator)
  Env* env = nullptr;             // Env::Default() when null
  int64_t request_timeout_ms = 10'000;
  int64_t overall_deadline_ms = 30'000;  // for one Call, all attempts and waits included
  int64_t initial_backoff_ms = 50;
  int64_t max_backoff_ms = 2'000;
  int max_attempts = 10;
};

// What happened during one Call, for callers that must resolve ambiguous outcomes.
struct CallInfo {
  int attempts = 0;
  // True when an earlier attempt may have been applied by the server without the reply
  // reaching us (a timeout, a dropped connection or a 5xx after the request was sent).
  bool maybe_applied_earlier = false;
};

class FirestoreHttp {
 public:
  explicit FirestoreHttp(FirestoreHttpOptions options);
  ~FirestoreHttp();

  // Sends `method` to base_url + `path` (e.g. "/v1/projects/p/databases/d/documents:commit")
  // with `body` as JSON (none when null). Retries transient failures within the deadline.
  // Returns the parsed JSON reply of a 2xx, or the mapped error (see FirestoreErrorStatus);
  // kDeadlineExceeded / kUnavailable when retries run out. Thread-safe.
  StatusOr<nlohmann::json> Call(const std::string& method, const std::string& path,
                                const nlohmann::json* body, CallInfo* info = nullptr);

  // HTTP requests sent so far (every attempt counts). Thread-safe.
  uint64_t requests_sent() const { return requests_sent_.load(); }

 private:
  struct Client;
  StatusOr<HttpReply> SendOnce(const std::string& method, const std::string& path,
                               const std::string& body);
  int64_t BackoffMicros(int attempt);

  FirestoreHttpOptions options_;
  std::unique_ptr<Client> client_;
  std::atomic<uint64_t> requests_sent_{0};
};

}  // namespace agentckpt
