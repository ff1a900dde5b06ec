#include "store/firestore/firestore_http.h"

#include <cpprest/http_client.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>

#include "common/status_macros.h"
#include "store/firestore/firestore_auth.h"

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
    case 407:  // from an egress proxy (http_proxy.h), not from Firestore
      return StatusCode::kUnauthenticated;
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
  } else if (http_status == 407) {
    text += ": the proxy requires other credentials (the user:password@ of the proxy variable)";
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

// The one place where a cpprestsdk exception becomes a Status: kDeadlineExceeded for a timeout,
// kUnavailable otherwise. `what` names the request ("Firestore request /v1/...").
Status StatusFromHttpException(const std::exception& e, const std::string& what) {
  const auto* http = dynamic_cast<const web::http::http_exception*>(&e);
  if (http != nullptr && http->error_code() == std::errc::timed_out) {
    return DeadlineExceededError(what + " timed out");
  }
  return UnavailableError(what + " failed: " + e.what());
}

// Sends `request` and reads the whole reply.
StatusOr<HttpReply> Exchange(http_client& client, web::http::http_request& request,
                             const std::string& what) {
  try {
    web::http::http_response response = client.request(request).get();
    HttpReply reply;
    reply.status = response.status_code();
    reply.body = response.extract_utf8string(/*ignore_content_type=*/true).get();
    return reply;
  } catch (const std::exception& e) {
    return StatusFromHttpException(e, what);
  }
}

// Gives `config` the route's proxy and its credentials (sent as Proxy-Authorization: Basic).
// web::uri accepts every proxy_url RouteFor returns (http_proxy.cc checks the host's characters).
http_client_config ConfigWithRoute(int64_t timeout_ms, const ProxyRoute& route) {
  http_client_config config;
  config.set_timeout(std::chrono::milliseconds(timeout_ms));
  if (!route.direct()) {
    web::web_proxy proxy{web::uri(route.proxy_url)};
    if (!route.user.empty() || !route.password.empty()) {
      proxy.set_credentials(web::credentials(route.user, route.password));
    }
    config.set_proxy(std::move(proxy));
  }
  return config;
}

}  // namespace

StatusOr<HttpReply> HttpOnce(const std::string& method, const std::string& url,
                             const std::map<std::string, std::string>& headers,
                             const std::string& body, const std::string& content_type,
                             int64_t timeout_ms, ProxyUse proxy) {
  ProxyRoute route;
  if (proxy == ProxyUse::kFromEnvironment) {
    ASSIGN_OR_RETURN(route, RouteFor(url, ProxyEnvironment::FromProcess()));
  }
  try {
    http_client client(url, ConfigWithRoute(timeout_ms, route));
    web::http::http_request request(method);
    for (const auto& [name, value] : headers) request.headers().add(name, value);
    if (!body.empty() || method == "POST") request.set_body(body, content_type);
    return Exchange(client, request, "HTTP request to " + url);
  } catch (const std::exception& e) {
    return UnavailableError("HTTP request to " + url + " failed: " + e.what());
  }
}

struct FirestoreHttp::Client {
  Client(const std::string& base, int64_t timeout_ms, const ProxyRoute& route)
      : client(base, ConfigWithRoute(timeout_ms, route)) {}
  http_client client;
};

// The attempts of one Call. Outcomes are posted by cpprestsdk's continuations (on its thread
// pool) and taken by the calling thread; the continuations hold the Race, never the
// FirestoreHttp, so an attempt abandoned by a finished Call touches nothing that is gone.
struct FirestoreHttp::Race {
  struct Outcome {
    int attempt = 0;
    StatusOr<HttpReply> reply = Status(StatusCode::kInternal, "no reply");
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Outcome> done;
  pplx::cancellation_token_source cancel;

  void Post(int attempt, StatusOr<HttpReply> reply) {
    {
      std::lock_guard<std::mutex> lock(mu);
      done.push_back(Outcome{attempt, std::move(reply)});
    }
    cv.notify_all();
  }
};

FirestoreHttp::FirestoreHttp(FirestoreHttpOptions options) : options_(std::move(options)) {
  if (options_.env == nullptr) options_.env = Env::Default();
  client_ =
      std::make_unique<Client>(options_.base_url, options_.request_timeout_ms, options_.proxy);
}

FirestoreHttp::~FirestoreHttp() = default;

void FirestoreHttp::SendAsync(const std::string& method, const std::string& path,
                              const std::string& body, const std::shared_ptr<Race>& race,
                              int attempt) {
  web::http::http_request request(method);
  request.set_request_uri(path);
  if (options_.tokens != nullptr) {
    StatusOr<std::string> token = options_.tokens->AccessToken();
    if (!token.ok()) {
      race->Post(attempt, token.status());
      return;
    }
    if (!token->empty()) request.headers().add("Authorization", "Bearer " + *token);
  }
  if (!body.empty()) request.set_body(body, "application/json");
  requests_sent_.fetch_add(1);
  const std::string what = "Firestore request " + path;
  try {
    client_->client.request(request, race->cancel.get_token())
        .then([](web::http::http_response response) {
          int status = response.status_code();
          return response.extract_utf8string(/*ignore_content_type=*/true)
              .then([status](std::string text) {
                return HttpReply{status, std::move(text)};
              });
        })
        .then([race, attempt, what](pplx::task<HttpReply> done) {
          try {
            race->Post(attempt, done.get());
          } catch (const std::exception& e) {
            race->Post(attempt, StatusFromHttpException(e, what));
          }
        });
  } catch (const std::exception& e) {
    race->Post(attempt, StatusFromHttpException(e, what));
  }
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

namespace {

// Copies of one request in flight at once: the first and at most two hedges.
constexpr int kMaxInFlight = 3;

bool IsConflictCode(StatusCode code) {
  return code == StatusCode::kAlreadyExists || code == StatusCode::kFailedPrecondition;
}

}  // namespace

StatusOr<nlohmann::json> FirestoreHttp::Call(const std::string& method, const std::string& path,
                                             const nlohmann::json* body, CallInfo* info,
                                             Hedge hedge) {
  CallInfo local;
  if (info == nullptr) info = &local;
  *info = CallInfo();
  const std::string payload = body ? body->dump() : std::string();
  Env* env = options_.env;
  const int64_t deadline = env->NowMonotonicMicros() + options_.overall_deadline_ms * 1000;
  const bool hedging = hedge == Hedge::kYes && options_.hedge_after_ms > 0;
  using Clock = std::chrono::steady_clock;
  const auto kNever = Clock::time_point::max();
  auto race = std::make_shared<Race>();
  int in_flight = 0, failures = 0;
  // When to send another copy while requests are in flight: a hedge (none answered in time) or
  // the replacement of a copy that failed while its twins are still out. kNever: don't.
  auto next_copy_at = kNever;
  auto launch = [&] {
    ++in_flight;
    ++info->attempts;
    SendAsync(method, path, payload, race, info->attempts);
    next_copy_at =
        hedging ? Clock::now() + std::chrono::milliseconds(options_.hedge_after_ms) : kNever;
  };
  // Whatever is still in flight when Call returns is abandoned and cancelled (a hedgeable twin
  // cannot apply after an answer has been taken; see Hedge); nobody reads its outcome.
  struct CancelOnReturn {
    Race* race;
    ~CancelOnReturn() { race->cancel.cancel(); }
  } cancel_on_return{race.get()};

  bool refreshed_token = false;
  std::optional<Status> conflict;  // a conflict that arrived while a twin was in flight
  Status last;
  launch();
  while (true) {
    std::optional<Race::Outcome> outcome;
    {
      std::unique_lock<std::mutex> lock(race->mu);
      while (race->done.empty()) {
        int64_t left_us = deadline - env->NowMonotonicMicros();
        if (left_us <= 0) break;
        auto until = Clock::now() + std::chrono::microseconds(left_us);
        bool may_copy = in_flight < kMaxInFlight && info->attempts < options_.max_attempts;
        if (may_copy && next_copy_at < until) {
          if (Clock::now() >= next_copy_at) break;
          until = next_copy_at;
        }
        race->cv.wait_until(lock, until);
      }
      if (!race->done.empty()) {
        outcome = std::move(race->done.front());
        race->done.pop_front();
      }
    }
    if (!outcome) {
      if (env->NowMonotonicMicros() >= deadline) {
        info->maybe_applied_earlier = true;
        last = DeadlineExceededError("Firestore " + path + ": no answer within the " +
                                     std::to_string(options_.overall_deadline_ms) + " ms deadline");
        break;
      }
      ++info->hedges;  // the requests in flight are slow (or one failed): send another copy
      launch();
      continue;
    }
    --in_flight;
    StatusOr<HttpReply>& reply = outcome->reply;
    if (reply.ok() && reply->status >= 200 && reply->status < 300) {
      auto j = nlohmann::json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded()) return InternalError("Firestore reply to " + path + " is not JSON");
      info->winner = outcome->attempt;
      return j;
    }
    if (reply.ok()) {
      Status error = FirestoreErrorStatus(reply->status, reply->body);
      if (reply->status == 401 && options_.tokens != nullptr && !refreshed_token) {
        options_.tokens->Invalidate();
        refreshed_token = true;
        last = error;
        if (in_flight == 0) launch();
        continue;
      }
      if (!IsRetryableHttpStatus(reply->status, reply->body)) {
        if (IsConflictCode(error.code()) && in_flight > 0) {
          // A twin may be the request that applied: the twins' answers decide; more copies
          // would only conflict too.
          conflict = error;
          info->maybe_applied_earlier = true;
          next_copy_at = kNever;
          continue;
        }
        return error;
      }
      last = error;
      if (reply->status != 429) info->maybe_applied_earlier = true;
    } else {
      const Status& error = reply.status();
      if (error.code() != StatusCode::kUnavailable &&
          error.code() != StatusCode::kDeadlineExceeded) {
        return error;  // e.g. credentials could not be obtained
      }
      last = error;
      info->maybe_applied_earlier = true;
    }
    // A transient failure. With twins still in flight, one may yet succeed: wait for them, and
    // send a replacement after the backoff unless one answers first (or a conflict says the
    // twins decide). Otherwise back off and try again.
    ++failures;
    if (in_flight > 0) {
      if (!conflict && hedging) {
        next_copy_at = std::min(next_copy_at,
                                Clock::now() + std::chrono::microseconds(BackoffMicros(failures)));
      }
      continue;
    }
    if (conflict) return *conflict;
    if (info->attempts >= options_.max_attempts) break;
    int64_t wait = BackoffMicros(failures);
    if (env->NowMonotonicMicros() + wait >= deadline) break;
    env->SleepForMicros(wait);
    launch();
  }
  if (conflict) return *conflict;
  if (last.code() == StatusCode::kDeadlineExceeded) return last;
  return Status(StatusCode::kUnavailable, "Firestore " + path + " failed after " +
                                              std::to_string(info->attempts) +
                                              " attempts: " + last.ToString());
}

}  // namespace agentckpt
