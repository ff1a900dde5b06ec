#include "sidecar/http_server.h"

#include <cpprest/http_listener.h>
#include <pplx/threadpool.h>

#include <exception>

#include "sidecar/json_log.h"

namespace agentckpt {

using web::http::http_request;
using web::http::http_response;
using web::http::experimental::listener::http_listener;

namespace {

void Reply(http_request& request, const ApiResponse& r) {
  http_response response(static_cast<web::http::status_code>(r.status));
  for (const auto& [name, value] : r.headers) response.headers().add(name, value);
  response.set_body(r.body, r.content_type);
  request.reply(response).then([](pplx::task<void> t) {
    try {
      t.get();
    } catch (const std::exception& e) {
      LogDebug("http reply not delivered", {{"reason", e.what()}});
    }
  });
}

}  // namespace

void ConfigureHttpThreads(size_t threads) {
  crossplat::threadpool::initialize_with_threads(threads);
}

HttpServer::HttpServer(std::string host, int port, int64_t body_max_bytes, ApiRouter* router)
    : host_(std::move(host)), port_(port), body_max_bytes_(body_max_bytes), router_(router) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  std::string uri = "http://" + host_ + ":" + std::to_string(port_) + "/";
  try {
    listener_ = std::make_unique<http_listener>(uri);
    listener_->support([this](http_request request) {
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
          Reply(request, router_->Handle(req));
          return;
        }
        if (request.headers().content_length() > static_cast<uint64_t>(body_max_bytes_)) {
          Reply(request, ApiRouter::Error(
                             413, "PAYLOAD_TOO_LARGE",
                             "request body exceeds " + std::to_string(body_max_bytes_) + " bytes"));
          return;
        }
        req.body = request.extract_utf8string(/*ignore_content_type=*/true).get();
        Reply(request, router_->Handle(req));
      } catch (const std::exception& e) {
        Reply(request, ApiRouter::Error(400, "BAD_REQUEST",
                                        std::string("cannot read the request: ") + e.what()));
      }
    });
    listener_->open().wait();
  } catch (const std::exception& e) {
    listener_.reset();
    return UnavailableError("cannot listen on " + uri + ": " + e.what());
  }
  return OkStatus();
}

void HttpServer::Stop() {
  if (!listener_) return;
  try {
    listener_->close().wait();
  } catch (const std::exception& e) {
    LogWarn("http listener close failed", {{"reason", e.what()}});
  }
  listener_.reset();
}

}  // namespace agentckpt
