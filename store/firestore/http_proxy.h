// Which HTTP proxy a request to the Firestore API (and to Google's token endpoint) goes through,
// chosen from the environment variables that curl, Go and Node read. Clusters that reach the
// internet only through an egress proxy set them on the pod; format in docs/firestore.md
// ("Egress proxy"). No library of ours reads them (cpprestsdk connects directly unless given a
// proxy), so this unit does, by the common rules:
//   - https://... uses https_proxy, else HTTPS_PROXY; http://... uses http_proxy, else
//     HTTP_PROXY (the lower-case name wins, as in curl and Node);
//   - no_proxy, else NO_PROXY: entries separated by commas or spaces. "*" matches every host.
//     A name matches itself and its subdomains ("example.com" and ".example.com" both match
//     example.com and api.example.com); an IP address matches itself; a CIDR block
//     ("10.0.0.0/8", "fd00::/8") matches the addresses inside it; "host:port" matches that port
//     only. Case does not matter;
//   - loopback hosts (localhost, 127.0.0.0/8, ::1) are always reached directly;
//   - a proxy is given as [http://][user[:password]@]host[:port]; the port defaults to 80; user
//     and password may be percent-encoded. https:// and socks proxies are refused (cpprestsdk
//     speaks plain HTTP to a proxy; a tunnel to an https:// target goes through CONNECT).
// Thread-safe: pure functions (FromProcess reads the environment).
#pragma once

#include <string>

#include "common/status.h"

namespace agentckpt {

// The variables that choose a proxy; empty when unset.
struct ProxyEnvironment {
  std::string http_proxy;   // http_proxy, else HTTP_PROXY
  std::string https_proxy;  // https_proxy, else HTTPS_PROXY
  std::string no_proxy;     // no_proxy, else NO_PROXY
  // Reads them from this process's environment.
  static ProxyEnvironment FromProcess();
};

// Where a request goes: directly (proxy_url empty) or through proxy_url ("http://host:port").
struct ProxyRoute {
  std::string proxy_url;
  std::string user;  // from the proxy's user:password@, decoded; empty when none
  std::string password;
  std::string variable;  // the variables that named the proxy ("https_proxy/HTTPS_PROXY")
  bool direct() const { return proxy_url.empty(); }
};

// The route of a request to `url` (scheme://host[:port]/...). kInvalidArgument when `url` has no
// http(s) scheme or host, or when the variable that applies does not name a usable proxy (the
// message names the variable; credentials are never part of a message).
StatusOr<ProxyRoute> RouteFor(const std::string& url, const ProxyEnvironment& env);

}  // namespace agentckpt
