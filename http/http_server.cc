#include "http/http_server.h"

#include <cpprest/http_listener.h>
#include <pplx/threadpool.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>

#include "observability/json_log.h"

namespace agentckpt {

using web::http::http_request;
using web::http::http_response;
using web::http::experimental::listener::http_listener;

struct HttpServer::InFlight {
  std::mutex mu;
  std::condition_variable cv;
  int in_progress = 0;  // requests taken and not yet replied to (reply sent or failed)
  bool closing = false;

  // Counts a request in; false when closing (the caller answers 503 and counts it anyway).
  bool Enter() {
    std::lock_guard<std::mutex> lock(mu);
    ++in_progress;
    return !closing;
  }
  void Leave() {
    {
      std::lock_guard<std::mutex> lock(mu);
      --in_progress;
    }
    cv.notify_all();
  }
};

namespace {

// Sends `r`; `drain` is left when the reply has been written (or has failed).
void Reply(http_request& request, const ApiResponse& r,
           std::shared_ptr<HttpServer::InFlight> drain) {
  http_response response(static_cast<web::http::status_code>(r.status));
  for (const auto& [name, value] : r.headers) response.headers().add(name, value);
  response.set_body(r.body, r.content_type);
  try {
    request.reply(response).then([drain](pplx::task<void> t) {
      try {
        t.get();
      } catch (const std::exception& e) {
        LogDebug("http reply not delivered", {{"reason", e.what()}});
      }
      drain->Leave();
    });
  } catch (const std::exception& e) {
    LogDebug("http reply not sent", {{"reason", e.what()}});
    drain->Leave();
  }
}

}  // namespace

void ConfigureHttpThreads(size_t threads) {
  crossplat::threadpool::initialize_with_threads(threads);
}

HttpServer::HttpServer(std::string host, int port, int64_t body_max_bytes, ApiRouter* router)
    : host_(std::move(host)),
      port_(port),
      body_max_bytes_(body_max_bytes),
      router_(router),
      in_flight_(std::make_shared<InFlight>()) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  std::string uri = "http://" + host_ + ":" + std::to_string(port_) + "/";
  try {
    listener_ = std::make_unique<http_listener>(uri);
    listener_->support([this, drain = in_flight_](http_request request) {
      if (!drain->Enter()) {
        Reply(request, ApiRouter::Error(503, "UNAVAILABLE", "the sidecar is shutting down"), drain);
        return;
      }
      try {
        ApiRequest req;
        req.method = request.method();
        web::uri uri = request.relative_uri();
        req.path = web::uri::decode(uri.path());
        for (const auto& [k, v] : web::uri::split_query(uri.query())) {
          req.query[web::uri::decode(k)] = web::uri::decode(v);
        }
        auto auth = request.headers().find(web::http::header_names::authorization);
        if (auth != request.headers().end()) req.authorization = auth->second;
        if (!router_->Authorized(req)) {  // 401 without reading the body
          Reply(request, router_->Handle(req), drain);
          return;
        }
        if (request.headers().content_length() > static_cast<uint64_t>(body_max_bytes_)) {
          Reply(request,
                ApiRouter::Error(
                    413, "PAYLOAD_TOO_LARGE",
                    "request body exceeds " + std::to_string(body_max_bytes_) + " bytes"),
                drain);
          return;
        }
        // The body is read without blocking a listener thread: with every thread waiting in
        // .get() for a body only another thread could read, concurrent clients starved the pool.
        request.extract_utf8string(/*ignore_content_type=*/true)
            .then([this, request, req = std::move(req),
                   drain](pplx::task<std::string> body) mutable {
              try {
                req.body = body.get();
              } catch (const std::exception& e) {
                Reply(request,
                      ApiRouter::Error(400, "BAD_REQUEST",
                                       std::string("cannot read the request: ") + e.what()),
                      drain);
                return;
              }
              Reply(request, router_->Handle(req), drain);
            });
      } catch (const std::exception& e) {
        Reply(request,
              ApiRouter::Error(400, "BAD_REQUEST",
                               std::string("cannot read the request: ") + e.what()),
              drain);
      }
    });
    listener_->open().wait();
  } catch (const std::exception& e) {
    listener_.reset();
    return UnavailableError("cannot listen on " + uri + ": " + e.what());
  }
  return OkStatus();
}

void HttpServer::Drain() {
  if (!listener_) return;
  std::unique_lock<std::mutex> lock(in_flight_->mu);
  in_flight_->closing = true;
  if (!in_flight_->cv.wait_for(lock, std::chrono::seconds(2),
                               [this] { return in_flight_->in_progress == 0; })) {
    LogWarn("http replies still in progress after the drain",
            {{"inProgress", in_flight_->in_progress}});
  }
}

void HttpServer::Stop() {
  if (!listener_ || closed_) return;
  Drain();
  try {
    listener_->close().wait();
  } catch (const std::exception& e) {
    LogWarn("http listener close failed", {{"reason", e.what()}});
  }
  closed_ = true;
}

}  // namespace agentckpt
