// HTTP for the Firestore store: one-shot requests over cpprestsdk, and FirestoreHttp, which
// calls the Firestore REST v1 API with a per-request timeout, retries with exponential backoff
// and jitter, an overall deadline, and hedging: a call the caller marks as safe to send twice
// gets a second, identical request when the first has not answered within `hedge_after_ms`, and
// the first answer wins (docs/firestore.md, "Hedged requests"). Backoff waits, the deadline and
// randomness come from the Env seam; the hedge timer waits on the real clock (it races real I/O).
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
#include "store/firestore/http_proxy.h"

namespace agentckpt {

class TokenSource;

struct HttpReply {
  int status = 0;
  std::string body;
};

// How a one-shot request picks its route: by the process's proxy variables (http_proxy.h), or
// always directly (the GCE metadata server, which a proxy must never see).
enum class ProxyUse { kFromEnvironment, kNever };

// Sends one request to an absolute URL and returns whatever HTTP status came back. kUnavailable
// if the connection fails, kDeadlineExceeded after `timeout_ms`, kInvalidArgument when the proxy
// variable that applies is malformed. Thread-safe.
StatusOr<HttpReply> HttpOnce(const std::string& method, const std::string& url,
                             const std::map<std::string, std::string>& headers,
                             const std::string& body, const std::string& content_type,
                             int64_t timeout_ms, ProxyUse proxy = ProxyUse::kFromEnvironment);

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
  ProxyRoute proxy;               // direct unless proxy.proxy_url is set (RouteFor)
  TokenSource* tokens = nullptr;  // null: no Authorization header (emulator)
  Env* env = nullptr;             // Env::Default() when null
  int64_t request_timeout_ms = 10'000;
  int64_t overall_deadline_ms = 30'000;  // for one Call, all attempts and waits included
  int64_t initial_backoff_ms = 10;
  int64_t max_backoff_ms = 2'000;
  int max_attempts = 10;  // requests per Call, hedges included
  // A hedgeable Call sends another copy of a request when no copy has answered for this long
  // (at most three copies in flight), and replaces a copy that failed while its twins are still
  // out after the backoff; 0 turns hedging off.
  int64_t hedge_after_ms = 0;
};

// Whether a Call may send the same request twice at once. Safe for reads, and for a :commit
// whose writes a late duplicate cannot apply again (each carries a currentDocument
// precondition that the first application breaks, or is a delete).
enum class Hedge { kNo, kYes };

// What happened during one Call, for callers that must resolve ambiguous outcomes.
struct CallInfo {
  int attempts = 0;
  // True when an earlier attempt may have been applied by the server without the reply
  // reaching us (a timeout, a dropped connection or a 5xx after the request was sent), or when
  // a conflict reply came while an identical hedged request was in flight.
  bool maybe_applied_earlier = false;
  int hedges = 0;  // requests sent because an earlier one was slow to answer
  int winner = 0;  // the attempt (1-based) whose reply was returned; 0 when none was
};

class FirestoreHttp {
 public:
  explicit FirestoreHttp(FirestoreHttpOptions options);
  ~FirestoreHttp();

  // Sends `method` to base_url + `path` (e.g. "/v1/projects/p/databases/d/documents:commit")
  // with `body` as JSON (none when null). Retries transient failures within the deadline; with
  // Hedge::kYes also hedges a slow request (see FirestoreHttpOptions::hedge_after_ms). A conflict
  // (kAlreadyExists, kFailedPrecondition) that arrives while an identical request is in flight
  // waits for that one: if it succeeds, so does the Call. Returns the parsed JSON reply of a
  // 2xx, or the mapped error (see FirestoreErrorStatus); kDeadlineExceeded / kUnavailable when
  // retries or the deadline run out. Requests still in flight when it returns are cancelled.
  // Thread-safe.
  StatusOr<nlohmann::json> Call(const std::string& method, const std::string& path,
                                const nlohmann::json* body, CallInfo* info = nullptr,
                                Hedge hedge = Hedge::kNo);

  // HTTP requests sent so far (every attempt counts). Thread-safe.
  uint64_t requests_sent() const { return requests_sent_.load(); }

 private:
  struct Client;
  struct Race;  // the attempts of one Call (firestore_http.cc)
  // Starts attempt `attempt` of a Call; its outcome is posted to `race`.
  void SendAsync(const std::string& method, const std::string& path, const std::string& body,
                 const std::shared_ptr<Race>& race, int attempt);
  int64_t BackoffMicros(int attempt);

  FirestoreHttpOptions options_;
  std::unique_ptr<Client> client_;
  std::atomic<uint64_t> requests_sent_{0};
};

}  // namespace agentckpt
