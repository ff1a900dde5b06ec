#include "tracing/otlp_http_exporter.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <exception>

namespace agentckpt::tracing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// How often a post in progress looks at its deadline and the cancel flag.
constexpr auto kSlice = std::chrono::milliseconds(20);

class OtlpHttpExporter final : public SpanExporter {
 public:
  OtlpHttpExporter(HttpUrl url, OtlpHttpOptions options)
      : url_(std::move(url)), options_(std::move(options)) {}

  Status Export(const std::vector<std::unique_ptr<SpanData>>& spans, Clock::time_point deadline,
                const std::atomic<bool>* cancel) override {
    std::string body = OtlpTraceRequest(spans, options_.resource)
                           .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    try {
      return Post(body, deadline, cancel);
    } catch (const std::exception& e) {
      return UnavailableError(std::string("OTLP export to ") + options_.endpoint + ": " + e.what());
    }
  }

 private:
  // One POST on a fresh connection, run on a private io_context in short slices so that the
  // deadline and the cancel flag are seen within kSlice.
  Status Post(const std::string& body, Clock::time_point deadline,
              const std::atomic<bool>* cancel) {
    asio::io_context io;
    tcp::resolver resolver(io);
    beast::tcp_stream stream(io);
    http::request<http::string_body> req{http::verb::post, url_.target, 11};
    req.set(http::field::host, url_.host + ":" + url_.port);
    req.set(http::field::content_type, "application/json");
    req.set(http::field::user_agent, "agentckpt");
    for (const auto& [name, value] : options_.headers) req.set(name, value);
    req.body() = body;
    req.prepare_payload();
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    bool done = false;
    boost::system::error_code failure;
    std::string step;
    auto finish = [&](const boost::system::error_code& ec, const char* what) {
      done = true;
      failure = ec;
      step = what;
    };
    resolver.async_resolve(
        url_.host, url_.port, [&](boost::system::error_code ec, tcp::resolver::results_type r) {
          if (ec) return finish(ec, "resolve");
          stream.async_connect(r, [&](boost::system::error_code ec2, const tcp::endpoint&) {
            if (ec2) return finish(ec2, "connect");
            http::async_write(stream, req, [&](boost::system::error_code ec3, size_t) {
              if (ec3) return finish(ec3, "send");
              http::async_read(stream, buffer, res, [&](boost::system::error_code ec4, size_t) {
                finish(ec4, "read the answer");
              });
            });
          });
        });
    while (!done) {
      const bool cancelled = cancel != nullptr && cancel->load();
      const auto now = Clock::now();
      if (cancelled || now >= deadline) {
        resolver.cancel();
        boost::system::error_code ignored;
        stream.socket().close(ignored);
        return DeadlineExceededError("OTLP export to " + options_.endpoint +
                                     (cancelled ? ": cut off at shutdown" : ": timed out"));
      }
      io.run_for(std::min<Clock::duration>(kSlice, deadline - now));
      if (io.stopped() && !done) io.restart();
    }
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    if (failure) {
      return UnavailableError("OTLP export to " + options_.endpoint + ": " + step + ": " +
                              failure.message());
    }
    const unsigned code = res.result_int();
    if (code < 200 || code > 299) {
      return UnavailableError("OTLP export to " + options_.endpoint + ": HTTP " +
                              std::to_string(code) + " " + res.body().substr(0, 200));
    }
    return OkStatus();
  }

  HttpUrl url_;
  OtlpHttpOptions options_;
};

}  // namespace

StatusOr<HttpUrl> ParseHttpUrl(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0) {
    return InvalidArgumentError("\"" + url + "\": only http:// endpoints are supported");
  }
  std::string rest = url.substr(kScheme.size());
  size_t slash = rest.find_first_of("/?");
  HttpUrl out;
  std::string authority = rest.substr(0, slash);
  out.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (out.target[0] == '?') out.target = "/" + out.target;
  if (authority.find('@') != std::string::npos) {
    return InvalidArgumentError("\"" + url + "\": credentials in the URL are not supported");
  }
  std::string port;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return InvalidArgumentError("\"" + url + "\": bad IPv6 host");
    out.host = authority.substr(1, close - 1);
    std::string after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return InvalidArgumentError("\"" + url + "\": bad host");
      port = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    out.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (out.host.empty()) return InvalidArgumentError("\"" + url + "\": no host");
  if (port.empty()) port = "80";
  int n = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
  if (ec != std::errc() || end != port.data() + port.size() || n < 1 || n > 65535) {
    return InvalidArgumentError("\"" + url + "\": bad port \"" + port + "\"");
  }
  out.port = port;
  return out;
}

StatusOr<std::unique_ptr<SpanExporter>> NewOtlpHttpExporter(OtlpHttpOptions options) {
  auto url = ParseHttpUrl(options.endpoint);
  if (!url.ok()) return url.status();
  return std::unique_ptr<SpanExporter>(
      new OtlpHttpExporter(std::move(url).value(), std::move(options)));
}

}  // namespace agentckpt::tracing
