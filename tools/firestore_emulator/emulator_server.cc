#include "tools/firestore_emulator/emulator_server.h"

#include <cpprest/http_listener.h>
#include <cpprest/producerconsumerstream.h>

#include <chrono>
#include <map>
#include <thread>

#include "tools/firestore_emulator/firestore_routes.h"

namespace agentckpt::emulator {
namespace {

using nlohmann::json;
using web::http::http_request;
using web::http::http_response;
using web::http::experimental::listener::http_listener;

void ReplyJson(const http_request& request, int status, const json& body) {
  http_response response(static_cast<web::http::status_code>(status));
  response.headers().set_content_type("application/json; charset=UTF-8");
  response.set_body(body.dump());
  request.reply(response).then([](pplx::task<void> t) {
    try {
      t.get();
    } catch (...) {  // the client went away
    }
  });
}

// Sends the status line, headers and part of a chunked body, then fails the body stream: the
// server closes the connection mid-reply, so the client sees a dropped connection.
void ReplyThenDrop(const http_request& request) {
  concurrency::streams::producer_consumer_buffer<uint8_t> buffer;
  http_response response(web::http::status_codes::OK);
  response.headers().set_content_type("application/json; charset=UTF-8");
  response.set_body(concurrency::streams::istream(buffer));
  request.reply(response).then([](pplx::task<void> t) {
    try {
      t.get();
    } catch (...) {
    }
  });
  static const char kPartial[] = "{\"writeRes";
  buffer.putn_nocopy(reinterpret_cast<const uint8_t*>(kPartial), sizeof(kPartial) - 1).wait();
  buffer.sync().wait();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  buffer.close(std::ios_base::out, std::make_exception_ptr(std::runtime_error("dropped"))).wait();
}

}  // namespace

json FaultConfigToJson(const FaultConfig& f) {
  return {{"errorRate", f.error_rate}, {"errorStatus", f.error_status}, {"delayRate", f.delay_rate},
          {"delayMs", f.delay_ms},     {"dropRate", f.drop_rate},       {"script", f.script},
          {"match", f.match}};
}

StatusOr<FaultConfig> FaultConfigFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgumentError("fault config must be a JSON object");
  FaultConfig f;
  try {
    f.error_rate = j.value("errorRate", 0.0);
    f.error_status = j.value("errorStatus", 503);
    f.delay_rate = j.value("delayRate", 0.0);
    f.delay_ms = j.value("delayMs", 0);
    f.drop_rate = j.value("dropRate", 0.0);
    f.script = j.value("script", std::vector<std::string>());
    f.match = j.value("match", std::string());
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("fault config: ") + e.what());
  }
  for (const std::string& entry : f.script) {
    if (entry != "none" && entry != "error" && entry != "delay" && entry != "drop" &&
        entry != "late-reply") {
      return InvalidArgumentError("fault config: unknown script entry \"" + entry +
                                  "\" (none, error, delay, drop, late-reply)");
    }
  }
  return f;
}

class EmulatorServer::Impl {
 public:
  Impl(std::string host, int port, FaultConfig faults, uint64_t seed)
      : url_("http://" + host + ":" + std::to_string(port)),
        faults_(faults),
        rng_(seed),
        routes_(&db_) {}

  Status Start() {
    try {
      listener_ = std::make_unique<http_listener>(url_);
      listener_->support([this](http_request r) { Handle(std::move(r)); });
      listener_->open().wait();
    } catch (const std::exception& e) {
      return UnavailableError("cannot listen on " + url_ + ": " + e.what());
    }
    return OkStatus();
  }

  void Stop() {
    if (!listener_) return;
    try {
      listener_->close().wait();
    } catch (const std::exception&) {
    }
    listener_.reset();
  }

 private:
  enum class Fault { kNone, kError, kDelay, kDrop, kLateReply };

  Fault Draw(const std::string& path, const std::string& body, FaultConfig* config) {
    std::lock_guard<std::mutex> lock(mu_);
    *config = faults_;
    if (!faults_.match.empty() && path.find(faults_.match) == std::string::npos &&
        body.find(faults_.match) == std::string::npos) {
      return Fault::kNone;
    }
    if (script_next_ < faults_.script.size()) {
      const std::string& entry = faults_.script[script_next_++];
      if (entry == "error") return Fault::kError;
      if (entry == "delay") return Fault::kDelay;
      if (entry == "drop") return Fault::kDrop;
      if (entry == "late-reply") return Fault::kLateReply;
      return Fault::kNone;
    }
    std::uniform_real_distribution<double> u(0.0, 1.0);
    double r = u(rng_);
    if (r < faults_.drop_rate) return Fault::kDrop;
    r -= faults_.drop_rate;
    if (r < faults_.error_rate) return Fault::kError;
    r -= faults_.error_rate;
    if (r < faults_.delay_rate) return Fault::kDelay;
    return Fault::kNone;
  }

  void Handle(http_request request) {
    const std::string path = web::uri::decode(request.relative_uri().path());
    const std::string method = request.method();
    try {
      if (path.rfind("/v1/", 0) == 0) {
        HandleFirestore(request, method, path);
      } else if (path == "/" && method == "GET") {
        request.reply(web::http::status_codes::OK, "Ok");
      } else if (path.rfind("/emulator/v1/", 0) == 0) {
        HandleControl(request, method, path);
      } else {
        ReplyJson(request, 404, ErrorBody(404, "NOT_FOUND", "no route for " + path));
      }
    } catch (const std::exception& e) {
      ReplyJson(request, 500, ErrorBody(500, "INTERNAL", e.what()));
    }
  }

  void HandleFirestore(http_request request, const std::string& method, const std::string& path) {
    requests_.fetch_add(1);
    std::string body = request.extract_utf8string(true).get();
    FaultConfig config;
    Fault fault = Draw(path, body, &config);
    if (fault == Fault::kError) {
      errors_.fetch_add(1);
      ReplyJson(
          request, config.error_status,
          ErrorBody(config.error_status, StatusNameForHttp(config.error_status), "injected fault"));
      return;
    }
    if (fault == Fault::kDelay) {
      delays_.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(config.delay_ms));
    }
    RouteReply reply = routes_.Handle(method, path.substr(4), request.relative_uri().query(), body);
    {
      std::lock_guard<std::mutex> lock(mu_);
      by_route_[reply.route]++;
    }
    if (fault == Fault::kDrop) {
      drops_.fetch_add(1);
      ReplyThenDrop(request);
      return;
    }
    if (fault == Fault::kLateReply) {
      delays_.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(config.delay_ms));
    }
    ReplyJson(request, reply.http_status, reply.body);
  }

  void HandleControl(http_request request, const std::string& method, const std::string& path) {
    if (path == "/emulator/v1/stats" && method == "GET") {
      json stats = {{"requests", requests_.load()},
                    {"errors", errors_.load()},
                    {"delays", delays_.load()},
                    {"drops", drops_.load()}};
      std::lock_guard<std::mutex> lock(mu_);
      stats["byRoute"] = by_route_;
      stats["faults"] = FaultConfigToJson(faults_);
      stats["documentWrites"] = db_.WriteCounts();
      ReplyJson(request, 200, stats);
      return;
    }
    if (path == "/emulator/v1/stats" && method == "DELETE") {
      requests_ = 0;
      errors_ = 0;
      delays_ = 0;
      drops_ = 0;
      db_.ResetWriteCounts();
      std::lock_guard<std::mutex> lock(mu_);
      by_route_.clear();
      ReplyJson(request, 200, json::object());
      return;
    }
    if (path == "/emulator/v1/faults" && (method == "PUT" || method == "POST")) {
      auto j = json::parse(request.extract_utf8string(true).get(), nullptr, false);
      StatusOr<FaultConfig> f = FaultConfigFromJson(j);
      if (!f.ok()) {
        ReplyJson(request, 400, ErrorBody(400, "INVALID_ARGUMENT", f.status().message()));
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      faults_ = *f;
      script_next_ = 0;
      ReplyJson(request, 200, FaultConfigToJson(faults_));
      return;
    }
    const std::string docs_suffix = "/documents";
    if (method == "DELETE" && path.size() > docs_suffix.size() &&
        path.compare(path.size() - docs_suffix.size(), docs_suffix.size(), docs_suffix) == 0) {
      db_.Clear(path.substr(std::string("/emulator/v1/").size()) + "/");
      ReplyJson(request, 200, json::object());
      return;
    }
    ReplyJson(request, 404, ErrorBody(404, "NOT_FOUND", "no route for " + path));
  }

  std::string url_;
  std::unique_ptr<http_listener> listener_;
  std::mutex mu_;
  FaultConfig faults_;
  size_t script_next_ = 0;  // the next entry of faults_.script
  std::mt19937_64 rng_;
  std::map<std::string, uint64_t> by_route_;
  std::atomic<uint64_t> requests_{0}, errors_{0}, delays_{0}, drops_{0};
  DocumentDb db_;
  FirestoreRoutes routes_;
};

EmulatorServer::EmulatorServer(std::string host, int port, FaultConfig faults, uint64_t seed)
    : impl_(std::make_unique<Impl>(std::move(host), port, faults, seed)) {}
EmulatorServer::~EmulatorServer() { impl_->Stop(); }
Status EmulatorServer::Start() { return impl_->Start(); }
void EmulatorServer::Stop() { impl_->Stop(); }

}  // namespace agentckpt::emulator
