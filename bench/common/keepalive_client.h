// A minimal synchronous HTTP/1.1 client over one keep-alive connection (Boost.Beast): what a
// C++ agent that talks to its sidecar directly would use. The benches measure the sidecar with
// it as well as with cpprestsdk, whose task machinery adds its own cost to every call.
// Not thread-safe: one client per thread.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <string>
#include <utility>

namespace agentckpt::bench {

struct KeepAliveReply {
  int status = 0;  // 0: the call failed (body says why)
  std::string body;
};

class KeepAliveClient {
 public:
  // `authorization`: the Authorization header sent with every request ("" for none).
  explicit KeepAliveClient(int port, std::string authorization = "")
      : port_(port), authorization_(std::move(authorization)) {}

  // Sends one request on the kept-alive connection (connecting first when there is none).
  KeepAliveReply Call(const std::string& method, const std::string& target,
                      const std::string& body) {
    namespace http = boost::beast::http;
    KeepAliveReply reply;
    boost::system::error_code ec;
    if (!socket_.is_open()) {
      socket_.connect(
          {boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)}, ec);
      if (ec) return Failed("connect: " + ec.message());
      socket_.set_option(boost::asio::ip::tcp::no_delay(true), ec);
    }
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.keep_alive(true);
    if (!authorization_.empty()) req.set(http::field::authorization, authorization_);
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
    }
    req.prepare_payload();
    http::write(socket_, req, ec);
    if (ec) return Failed("write: " + ec.message());
    http::response<http::string_body> res;
    http::read(socket_, buffer_, res, ec);
    if (ec) return Failed("read: " + ec.message());
    if (!res.keep_alive()) socket_.close(ec);
    reply.status = res.result_int();
    reply.body = std::move(res.body());
    return reply;
  }

 private:
  KeepAliveReply Failed(std::string why) {
    boost::system::error_code ignored;
    socket_.close(ignored);
    return KeepAliveReply{0, std::move(why)};
  }

  int port_;
  std::string authorization_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_{io_};
  boost::beast::flat_buffer buffer_;
};

}  // namespace agentckpt::bench
