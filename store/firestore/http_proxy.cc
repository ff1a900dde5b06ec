// RouteFor: the proxy rules of http_proxy.h.
#include "store/firestore/http_proxy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace agentckpt {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string FirstSet(const char* lower, const char* upper) {
  for (const char* name : {lower, upper}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return v;
  }
  return "";
}

// host and port of a URL's authority ("[::1]:8080" -> "::1", "8080"); port empty when absent.
struct HostPort {
  std::string host;
  std::string port;
};

bool SplitHostPort(const std::string& authority, HostPort* out) {
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return false;
    out->host = authority.substr(1, close - 1);
    std::string rest = authority.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return false;
    out->port = rest.empty() ? "" : rest.substr(1);
  } else {
    size_t colon = authority.rfind(':');
    if (colon != std::string::npos && authority.find(':') != colon) {
      out->host = authority;  // a bare IPv6 address (no brackets, no port)
      out->port = "";
    } else {
      out->host = authority.substr(0, colon);
      out->port = colon == std::string::npos ? "" : authority.substr(colon + 1);
    }
  }
  if (out->host.empty()) return false;
  return std::all_of(out->port.begin(), out->port.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; });
}

// An IP address in network order: 4 bytes (IPv4) or 16 (IPv6); empty when `s` is not one.
std::vector<unsigned char> ParseIp(const std::string& s) {
  unsigned char buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1) return {buf, buf + 4};
  if (inet_pton(AF_INET6, s.c_str(), buf) == 1) return {buf, buf + 16};
  return {};
}

bool InBlock(const std::vector<unsigned char>& ip, const std::vector<unsigned char>& net,
             int bits) {
  if (ip.size() != net.size() || bits < 0 || bits > static_cast<int>(8 * ip.size())) {
    return false;
  }
  for (int i = 0; i < bits; ++i) {
    int mask = 0x80 >> (i % 8);
    if ((ip[i / 8] & mask) != (net[i / 8] & mask)) return false;
  }
  return true;
}

bool IsLoopback(const std::string& host) {
  if (host == "localhost" || (host.size() > 10 && host.ends_with(".localhost"))) return true;
  std::vector<unsigned char> ip = ParseIp(host);
  if (ip.size() == 4) return ip[0] == 127;
  return ip.size() == 16 && InBlock(ip, ParseIp("::1"), 128);
}

// Whether one no_proxy entry (lower case, trimmed) matches host and port.
bool EntryMatches(std::string entry, const std::string& host, const std::string& port) {
  if (entry == "*") return true;
  size_t slash = entry.find('/');
  if (slash != std::string::npos) {  // a CIDR block
    std::vector<unsigned char> net = ParseIp(entry.substr(0, slash));
    std::string bits = entry.substr(slash + 1);
    if (net.empty() || bits.empty() || bits.size() > 3 ||
        !std::all_of(bits.begin(), bits.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; })) {
      return false;
    }
    return InBlock(ParseIp(host), net, std::atoi(bits.c_str()));
  }
  HostPort want;
  if (!SplitHostPort(entry, &want)) return false;
  if (!want.port.empty() && want.port != port) return false;
  std::string name = want.host;
  if (name[0] == '.') name = name.substr(1);
  if (name.empty()) return false;
  std::vector<unsigned char> ip = ParseIp(name);
  if (!ip.empty()) return ParseIp(host) == ip;
  return host == name || (host.size() > name.size() && host.ends_with("." + name));
}

bool Bypassed(const std::string& no_proxy, const std::string& host, const std::string& port) {
  std::string list = Lower(no_proxy);
  std::replace(list.begin(), list.end(), ' ', ',');
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string entry = list.substr(start, end - start);
    entry.erase(
        std::remove_if(entry.begin(), entry.end(), [](unsigned char c) { return std::isspace(c); }),
        entry.end());
    if (!entry.empty() && EntryMatches(entry, host, port)) return true;
    start = end + 1;
  }
  return false;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool PercentDecode(const std::string& in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size() || HexValue(in[i + 1]) < 0 || HexValue(in[i + 2]) < 0) {
      return false;
    }
    out->push_back(static_cast<char>(HexValue(in[i + 1]) * 16 + HexValue(in[i + 2])));
    i += 2;
  }
  return true;
}

StatusOr<ProxyRoute> ParseProxy(const std::string& value, const std::string& variable) {
  auto bad = [&](const std::string& why) {
    return InvalidArgumentError(variable + ": " + why +
                                " (expected http://[user:password@]host[:port])");
  };
  std::string rest = value;
  size_t scheme_end = rest.find("://");
  if (scheme_end != std::string::npos) {
    std::string scheme = Lower(rest.substr(0, scheme_end));
    if (scheme != "http") {
      // Named only when it looks like a scheme: text before "://" may hold credentials.
      bool named = !scheme.empty() && scheme.size() <= 16 &&
                   std::isalpha(static_cast<unsigned char>(scheme[0])) != 0 &&
                   std::all_of(scheme.begin(), scheme.end(), [](unsigned char c) {
                     return std::isalnum(c) != 0 || c == '+' || c == '-' || c == '.';
                   });
      return bad(named ? "a " + scheme + ":// proxy is not supported"
                       : "the proxy's scheme is not http://");
    }
    rest = rest.substr(scheme_end + 3);
  }
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('/') != std::string::npos) return bad("a proxy address has no path");
  ProxyRoute route;
  route.variable = variable;
  size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    std::string userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    size_t colon = userinfo.find(':');
    if (!PercentDecode(userinfo.substr(0, colon), &route.user) ||
        (colon != std::string::npos &&
         !PercentDecode(userinfo.substr(colon + 1), &route.password))) {
      return bad("malformed percent-encoding in the credentials");
    }
  }
  HostPort hp;
  if (!SplitHostPort(rest, &hp)) return bad("no proxy host, or a port that is not a number");
  bool v6 = hp.host.find(':') != std::string::npos;
  if (v6 ? ParseIp(hp.host).size() != 16
         : !std::all_of(hp.host.begin(), hp.host.end(), [](unsigned char c) {
             return std::isalnum(c) != 0 || c == '.' || c == '-' || c == '_';
           })) {
    return bad("\"" + hp.host + "\" is not a host name or IP address");
  }
  if (hp.port.empty()) hp.port = "80";
  if (hp.port.size() > 5 || std::atoi(hp.port.c_str()) < 1 || std::atoi(hp.port.c_str()) > 65535) {
    return bad("port " + hp.port + " is out of range");
  }
  route.proxy_url = "http://" + (v6 ? "[" + hp.host + "]" : hp.host) + ":" + hp.port;
  return route;
}

}  // namespace

ProxyEnvironment ProxyEnvironment::FromProcess() {
  ProxyEnvironment env;
  env.http_proxy = FirstSet("http_proxy", "HTTP_PROXY");
  env.https_proxy = FirstSet("https_proxy", "HTTPS_PROXY");
  env.no_proxy = FirstSet("no_proxy", "NO_PROXY");
  return env;
}

StatusOr<ProxyRoute> RouteFor(const std::string& url, const ProxyEnvironment& env) {
  size_t scheme_end = url.find("://");
  std::string scheme = scheme_end == std::string::npos ? "" : Lower(url.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") {
    return InvalidArgumentError("proxy choice: \"" + url + "\" is not an http(s) URL");
  }
  std::string authority = url.substr(scheme_end + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (size_t at = authority.rfind('@'); at != std::string::npos) {
    authority = authority.substr(at + 1);  // user:password@ of the target, not ours to use
  }
  HostPort target;
  if (!SplitHostPort(authority, &target)) {
    return InvalidArgumentError("proxy choice: \"" + url + "\" has no host");
  }
  target.host = Lower(target.host);
  if (!target.host.empty() && target.host.back() == '.') target.host.pop_back();
  if (target.port.empty()) target.port = scheme == "https" ? "443" : "80";
  const std::string& proxy = scheme == "https" ? env.https_proxy : env.http_proxy;
  if (proxy.empty() || IsLoopback(target.host) ||
      Bypassed(env.no_proxy, target.host, target.port)) {
    return ProxyRoute{};
  }
  return ParseProxy(proxy, scheme == "https" ? "https_proxy/HTTPS_PROXY" : "http_proxy/HTTP_PROXY");
}

}  // namespace agentckpt
