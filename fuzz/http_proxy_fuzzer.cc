// Fuzzes the proxy choice (store/firestore/http_proxy.h) with arbitrary variable values, as a
// pod's environment may hold them. The input is three lines: the target URL, the proxy variable
// (used for both schemes) and no_proxy. Invariants checked: nothing crashes or leaks; the same
// input gives the same answer; a chosen proxy is "http://" + a host of name characters or a
// bracketed IPv6 address + ":" + a port from 1 to 65535; a refusal is kInvalidArgument and never
// repeats the proxy's user:password@ (unless the target URL holds the same text); a loopback
// target is always reached directly.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "store/firestore/http_proxy.h"

namespace {

void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

bool WellFormedProxyUrl(const std::string& url) {
  if (url.rfind("http://", 0) != 0) return false;
  std::string rest = url.substr(7);
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string host = rest.substr(0, colon), port = rest.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
  }
  int n = std::atoi(port.c_str());
  if (n < 1 || n > 65535) return false;
  if (host.front() == '[') return host.back() == ']' && host.size() > 2;
  for (unsigned char c : host) {
    if (!(std::isalnum(c) || c == '.' || c == '-' || c == '_')) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  size_t first = input.find('\n');
  size_t second = first == std::string::npos ? std::string::npos : input.find('\n', first + 1);
  std::string url = input.substr(0, first);
  std::string proxy = first == std::string::npos ? "" : input.substr(first + 1, second - first - 1);
  std::string no_proxy = second == std::string::npos ? "" : input.substr(second + 1);
  agentckpt::ProxyEnvironment env;
  env.http_proxy = proxy;
  env.https_proxy = proxy;
  env.no_proxy = no_proxy;

  auto route = agentckpt::RouteFor(url, env);
  auto again = agentckpt::RouteFor(url, env);
  Require(route.ok() == again.ok(), "the same input gives the same answer");
  if (route.ok()) {
    Require(route->proxy_url == again->proxy_url && route->user == again->user &&
                route->password == again->password,
            "the same input gives the same route");
    Require(route->direct() || WellFormedProxyUrl(route->proxy_url), "a well-formed proxy URL");
  } else {
    Require(route.status().code() == agentckpt::StatusCode::kInvalidArgument,
            "a refusal is kInvalidArgument");
    size_t at = proxy.rfind('@');
    size_t scheme = proxy.find("://");
    size_t from = scheme == std::string::npos ? 0 : scheme + 3;
    if (at != std::string::npos && at > from) {
      std::string userinfo = proxy.substr(from, at - from + 1);  // "user:password@"
      // (A refusal of the target URL quotes the URL, which is the store's endpoint, not a
      // secret; the fuzzer may have put the same text in both.)
      // Nor is the form the message shows ("expected http://[user:password@]host[:port]").
      std::string message = route.status().message();
      const std::string form = "http://[user:password@]host[:port]";
      if (size_t f = message.find(form); f != std::string::npos) message.erase(f, form.size());
      Require(
          url.find(userinfo) != std::string::npos || message.find(userinfo) == std::string::npos,
          "a refusal never repeats the proxy's credentials");
    }
  }
  for (const char* loopback : {"http://localhost:8080/", "https://127.0.0.1/", "http://[::1]/"}) {
    auto direct = agentckpt::RouteFor(loopback, env);
    Require(direct.ok() && direct->direct(), "a loopback target is reached directly");
  }
  return 0;
}
