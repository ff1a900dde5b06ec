#include "store/firestore_http.h"

#include <cpprest/http_client.h>

#include <algorithm>
#include <chrono>
#include <exception>

#include "store/firestore_auth.h"

namespace agentckpt {
namespace {

using web::http::client::http_client;
using web::http::client::http_client_config;

StatusCode CodeFromName(const std::string& name) {
  if (name == "ALREADY_EXISTS") return StatusCode::kAlreadyExists;
  if (name == "FAILED_PRECONDITION") return StatusCode::kFailedPrecondition;
  if (name == "NOT_FOUND") return StatusCode::kNotFound;
  if (name == "INVALID_ARGUMENT" || name == "OUT_OF_RANGE") return StatusCode::kInvalidArgument;
  if (name == "UNAVAILABLE" || name == "ABORTED") return StatusCode::kUnavailable;
  if (name == "DEADLINE_EXCEEDED") return StatusCode::kDeadlineExceeded;
  if (name == "RESOURCE_EXHAUSTED") return StatusCode::kResourceExhausted;
  if (name == "PERMISSION_DENIED") return StatusCode::kPermissionDenied;
  if (name == "UNAUTHENTICATED") return StatusCode::kUnauthenticated;
  return StatusCode::kInternal;
}

StatusCode CodeFromHttp(int http_status) {
  switch (http_status) {
    case 400:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthenticated;
    case 403:
      return StatusCode::kPermissionDenied;
    case 404:
      return StatusCode::kNotFound;
    case 409:
      return StatusCode::kAlreadyExists;
    case 412:
      return StatusCode::kFailedPrecondition;
    case 429:
      return StatusCode::kResourceExhausted;
    case 502:
    case 503:
      return StatusCode::kUnavailable;
    case 504:
      return StatusCode::kDeadlineExceeded;
    default:
      return StatusCode::kInternal;
  }
}

std::string ErrorStatusName(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_array() && !j.empty()) j = j[0];  // streamed replies wrap the error in an array
  if (!j.is_object()) return "";
  auto e = j.find("error");
  if (e == j.end() || !e->is_object()) return "";
  auto s = e->find("status");
  return s != e->end() && s->is_string() ? s->get<std::string>() : "";
}

}  // namespace

Status FirestoreErrorStatus(int http_status, const std::string& body) {
  std::string name;
  std::string message;
  auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_array() && !j.empty()) j = j[0];
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const auto& e = j["error"];
    if (e.contains("status") && e["status"].is_string()) name = e["status"].get<std::string>();
    if (e.contains("message") && e["message"].is_string()) {
      message = e["message"].get<std::string>();
    }
  }
  StatusCode code = name.empty() ? CodeFromHttp(http_status) : CodeFromName(name);
  std::string text = "Firestore HTTP " + std::to_string(http_status);
  if (!name.empty()) text += " " + name;
  if (!message.empty()) {
    text += ": " + message;
  } else if (name.empty() && !body.empty()) {
    text += ": " + body.substr(0, 200);
  }
  return Status(code, text);
}

bool IsRetryableHttpStatus(int http_status, const std::string& body) {
  if (http_status == 429 || http_status == 500 || http_status == 502 || http_status == 503 ||
      http_status == 504) {
    return true;
  }
  return http_status == 409 && ErrorStatusName(body) == "ABORTED";
}

namespace {

// Sends `request` and reads the whole reply; the one place where cpprestsdk's exceptions become
// a Status. `what` names the request in error messages ("Firestore request /v1/...").
StatusOr<HttpReply> Exchange(http_client& client, web::http::http_request& request,
                             const std::string& what) {
  try {
    web::http::http_response response = client.request(request).get();
    HttpReply reply;
    reply.status = response.status_code();
    reply.body = response.extract_utf8string(/*ignore_content_type=*/true).get();
    return reply;
  } catch (const web::http::http_exception& e) {
    if (e.error_code() == std::errc::timed_out) return DeadlineExceededError(what + " timed out");
    return UnavailableError(what + " failed: " + e.what());
  } catch (const std::exception& e) {
    return UnavailableError(what + " failed: " + e.what());
  }
}

}  // namespace

StatusOr<HttpReply> HttpOnce(const std::string& method, const std::string& url,
                             const std::map<std::string, std::string>& headers,
                             const std::string& body, const std::string& content_type,
                             int64_t timeout_ms) {
  try {
    http_client_config config;
    config.set_timeout(std::chrono::milliseconds(timeout_ms));
    http_client client(url, config);
    web::http::http_request request(method);
    for (const auto& [name, value] : headers) request.headers().add(name, value);
    if (!body.empty() || method == "POST") request.set_body(body, content_type);
    return Exchange(client, request, "HTTP request to " + url);
  } catch (const std::exception& e) {
    return UnavailableError("HTTP request to " + url + " failed: " + e.what());
  }
}

struct FirestoreHttp::Client {
  explicit Client(const std::string& base, int64_t timeout_ms)
      : client(base, [timeout_ms] {
          http_client_config c;
          c.set_timeout(std::chrono::milliseconds(timeout_ms));
          return c;
        }()) {}
  http_client client;
};

FirestoreHttp::FirestoreHttp(FirestoreHttpOptions options) : options_(std::move(options)) {
  if (options_.env == nullptr) options_.env = Env::Default();
  client_ = std::make_unique<Client>(options_.base_url, options_.request_timeout_ms);
}

FirestoreHttp::~FirestoreHttp() = default;

StatusOr<HttpReply> FirestoreHttp::SendOnce(const std::string& method, const std::string& path,
                                            const std::string& body) {
  web::http::http_request request(method);
  request.set_request_uri(path);
  if (options_.tokens != nullptr) {
    StatusOr<std::string> token = options_.tokens->AccessToken();
    if (!token.ok()) return token.status();
    if (!token->empty()) request.headers().add("Authorization", "Bearer " + *token);
  }
  if (!body.empty()) request.set_body(body, "application/json");
  requests_sent_.fetch_add(1);
  return Exchange(client_->client, request, "Firestore request " + path);
}

int64_t FirestoreHttp::BackoffMicros(int attempt) {
  int64_t cap = options_.initial_backoff_ms;
  for (int i = 1; i < attempt && cap < options_.max_backoff_ms; ++i) cap *= 2;
  cap = std::min(cap, options_.max_backoff_ms) * 1000;
  uint64_t r = 0;
  if (!options_.env->RandomBytes(reinterpret_cast<uint8_t*>(&r), sizeof(r)).ok()) r = 0;
  // Equal jitter: half the window fixed, half random, so retries spread but still back off.
  return cap / 2 + static_cast<int64_t>(r % static_cast<uint64_t>(cap / 2 + 1));
}

StatusOr<nlohmann::json> FirestoreHttp::Call(const std::string& method, const std::string& path,
                                             const nlohmann::json* body, CallInfo* info) {
  CallInfo local;
  if (info == nullptr) info = &local;
  *info = CallInfo();
  const std::string payload = body ? body->dump() : std::string();
  const int64_t deadline = options_.env->NowMonotonicMicros() + options_.overall_deadline_ms * 1000;
  bool refreshed_token = false;
  Status last;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    info->attempts = attempt;
    StatusOr<HttpReply> reply = SendOnce(method, path, payload);
    if (reply.ok() && reply->status >= 200 && reply->status < 300) {
      auto j = nlohmann::json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded()) {
        return InternalError("Firestore reply to " + path + " is not JSON");
      }
      return j;
    }
    if (reply.ok()) {
      last = FirestoreErrorStatus(reply->status, reply->body);
      if (reply->status == 401 && options_.tokens != nullptr && !refreshed_token) {
        options_.tokens->Invalidate();
        refreshed_token = true;
        continue;
      }
      if (!IsRetryableHttpStatus(reply->status, reply->body)) return last;
      if (reply->status != 429) info->maybe_applied_earlier = true;
    } else {
      last = reply.status();
      if (last.code() != StatusCode::kUnavailable && last.code() != StatusCode::kDeadlineExceeded) {
        return last;  // e.g. credentials could not be obtained
      }
      info->maybe_applied_earlier = true;
    }
    int64_t wait = BackoffMicros(attempt);
    if (options_.env->NowMonotonicMicros() + wait >= deadline) break;
    options_.env->SleepForMicros(wait);
  }
  if (last.code() == StatusCode::kDeadlineExceeded) return last;
  return Status(StatusCode::kUnavailable, "Firestore " + path + " failed after " +
                                              std::to_string(info->attempts) +
                                              " attempts: " + last.ToString());
}

}  // namespace agentckpt
