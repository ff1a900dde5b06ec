// RouteFor (store/firestore/http_proxy.h): the expectations are the rules curl and Go document
// for http_proxy/https_proxy/no_proxy, written out case by case, not derived from the code.
#include "store/firestore/http_proxy.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace agentckpt {
namespace {

ProxyEnvironment Https(const std::string& proxy, const std::string& no_proxy = "") {
  ProxyEnvironment env;
  env.https_proxy = proxy;
  env.no_proxy = no_proxy;
  return env;
}

// The proxy URL a request to `url` goes through ("" for direct); "error" when refused.
std::string Via(const std::string& url, const ProxyEnvironment& env) {
  auto route = RouteFor(url, env);
  return route.ok() ? route->proxy_url : "error";
}

TEST(HttpProxyTest, DirectWithoutProxyVariables) {
  EXPECT_EQ(Via("https://firestore.googleapis.com/v1/x", ProxyEnvironment{}), "");
}

TEST(HttpProxyTest, SchemeChoosesTheVariable) {
  ProxyEnvironment env;
  env.http_proxy = "http://plain-proxy:3128";
  EXPECT_EQ(Via("https://firestore.googleapis.com", env), "");
  EXPECT_EQ(Via("http://example.com/", env), "http://plain-proxy:3128");
  env.https_proxy = "tls-proxy.corp:8080";  // no scheme: http:// is meant
  EXPECT_EQ(Via("https://firestore.googleapis.com", env), "http://tls-proxy.corp:8080");
  EXPECT_EQ(Via("HTTPS://Firestore.GoogleAPIs.com:443/v1", env), "http://tls-proxy.corp:8080");
}

TEST(HttpProxyTest, PortDefaultsToEightyAndIpv6ProxiesKeepBrackets) {
  EXPECT_EQ(Via("https://a.example", Https("http://proxy.corp")), "http://proxy.corp:80");
  EXPECT_EQ(Via("https://a.example", Https("http://proxy.corp/")), "http://proxy.corp:80");
  EXPECT_EQ(Via("https://a.example", Https("http://[fd00::1]:3128")), "http://[fd00::1]:3128");
}

TEST(HttpProxyTest, LoopbackIsAlwaysDirect) {
  auto env = Https("http://proxy:3128");
  env.http_proxy = "http://proxy:3128";
  for (const char* url : {"http://localhost:8080/", "http://127.0.0.1:9/", "http://127.9.9.9/",
                          "http://[::1]:8080/", "https://LOCALHOST/", "http://api.localhost/"}) {
    EXPECT_EQ(Via(url, env), "") << url;
  }
  EXPECT_EQ(Via("http://128.0.0.1/", env), "http://proxy:3128");
  EXPECT_EQ(Via("http://notlocalhost/", env), "http://proxy:3128");
}

TEST(HttpProxyTest, NoProxyNamesMatchThemselvesAndSubdomains) {
  const std::string proxy = "http://proxy:3128";
  EXPECT_EQ(Via("https://googleapis.com", Https(proxy, "googleapis.com")), "");
  EXPECT_EQ(Via("https://firestore.googleapis.com", Https(proxy, "googleapis.com")), "");
  EXPECT_EQ(Via("https://firestore.googleapis.com", Https(proxy, ".googleapis.com")), "");
  EXPECT_EQ(Via("https://firestore.googleapis.com", Https(proxy, "GoogleAPIs.COM")), "");
  EXPECT_EQ(Via("https://notgoogleapis.com", Https(proxy, "googleapis.com")), proxy);
  EXPECT_EQ(Via("https://googleapis.com.evil", Https(proxy, "googleapis.com")), proxy);
  EXPECT_EQ(Via("https://firestore.googleapis.com.", Https(proxy, "googleapis.com")), "");
  EXPECT_EQ(Via("https://a.example", Https(proxy, "*")), "");
  EXPECT_EQ(Via("https://a.example", Https(proxy, "b.example, a.example")), "");
  EXPECT_EQ(Via("https://a.example", Https(proxy, "b.example a.example")), "");
  EXPECT_EQ(Via("https://a.example", Https(proxy, " , ,")), proxy);
  EXPECT_EQ(Via("https://a.example", Https(proxy, "*.example")), proxy);  // no wildcards but "*"
}

TEST(HttpProxyTest, NoProxyAddressesBlocksAndPorts) {
  const std::string proxy = "http://proxy:3128";
  EXPECT_EQ(Via("https://10.1.2.3/", Https(proxy, "10.1.2.3")), "");
  EXPECT_EQ(Via("https://10.1.2.4/", Https(proxy, "10.1.2.3")), proxy);
  EXPECT_EQ(Via("https://10.1.2.3/", Https(proxy, "10.0.0.0/8")), "");
  EXPECT_EQ(Via("https://11.1.2.3/", Https(proxy, "10.0.0.0/8")), proxy);
  EXPECT_EQ(Via("https://192.168.1.77/", Https(proxy, "192.168.1.64/26")), "");
  EXPECT_EQ(Via("https://192.168.1.128/", Https(proxy, "192.168.1.64/26")), proxy);
  EXPECT_EQ(Via("https://[fd00::5]/", Https(proxy, "fd00::/8")), "");
  EXPECT_EQ(Via("https://[fe80::5]/", Https(proxy, "fd00::/8")), proxy);
  EXPECT_EQ(Via("https://[fd00::5]/", Https(proxy, "[fd00::5]")), "");
  EXPECT_EQ(Via("https://10.1.2.3/", Https(proxy, "10.0.0.0/33")), proxy);  // not a block
  EXPECT_EQ(Via("https://a.example:8443/", Https(proxy, "a.example:8443")), "");
  EXPECT_EQ(Via("https://a.example/", Https(proxy, "a.example:8443")), proxy);
  EXPECT_EQ(Via("https://a.example/", Https(proxy, "a.example:443")), "");  // default port
}

TEST(HttpProxyTest, CredentialsAreDecodedAndNeverInMessages) {
  auto route = RouteFor("https://a.example", Https("http://us%40er:p%3As%20s@proxy:3128"));
  ASSERT_TRUE(route.ok()) << route.status().ToString();
  EXPECT_EQ(route->proxy_url, "http://proxy:3128");
  EXPECT_EQ(route->user, "us@er");
  EXPECT_EQ(route->password, "p:s s");
  EXPECT_EQ(route->variable, "https_proxy/HTTPS_PROXY");
  auto bad = RouteFor("https://a.example", Https("http://user:hunter2@proxy:99999"));
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().find("hunter2"), std::string::npos);
  EXPECT_NE(bad.status().message().find("HTTPS_PROXY"), std::string::npos);
  EXPECT_NE(bad.status().message().find("99999"), std::string::npos);
  // Text before "://" that is not a scheme is not repeated: it may be credentials.
  auto garbled = RouteFor("https://a.example", Https("user:hunter2@://proxy:3128"));
  ASSERT_EQ(garbled.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(garbled.status().message().find("hunter2"), std::string::npos)
      << garbled.status().ToString();
  // Found by http_proxy_fuzzer.
  auto fuzzed = RouteFor("https://a.example", Https("httpusre%p:80s@://usre%p:80s@o-xy.cobp:c031"));
  ASSERT_EQ(fuzzed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fuzzed.status().message().find("usre%p:80s@"), std::string::npos)
      << fuzzed.status().ToString();
}

TEST(HttpProxyTest, UnusableProxiesAreRefused) {
  for (const char* proxy : {"https://proxy:3128", "socks5://proxy:1080", "http://:3128",
                            "http://proxy:port", "http://pro xy:3128", "http://proxy:0",
                            "http://proxy:3128/path", "http://u:%zz@proxy:1", "http://[fd00::1"}) {
    auto route = RouteFor("https://a.example", Https(proxy));
    EXPECT_EQ(route.status().code(), StatusCode::kInvalidArgument) << proxy;
  }
  // A malformed proxy matters only when it would be used.
  EXPECT_EQ(Via("https://a.example", Https("socks5://proxy:1080", "a.example")), "");
  EXPECT_EQ(RouteFor("ftp://a.example", Https("http://proxy:1")).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(HttpProxyTest, LowerCaseVariablesWinOverUpperCase) {
  setenv("HTTPS_PROXY", "http://upper:1", 1);
  setenv("https_proxy", "http://lower:2", 1);
  setenv("NO_PROXY", "upper.example", 1);
  unsetenv("no_proxy");
  unsetenv("http_proxy");
  unsetenv("HTTP_PROXY");
  ProxyEnvironment env = ProxyEnvironment::FromProcess();
  EXPECT_EQ(env.https_proxy, "http://lower:2");
  EXPECT_EQ(env.no_proxy, "upper.example");
  EXPECT_EQ(env.http_proxy, "");
  setenv("https_proxy", "", 1);  // set but empty: the other spelling applies
  EXPECT_EQ(ProxyEnvironment::FromProcess().https_proxy, "http://upper:1");
  for (const char* name : {"HTTPS_PROXY", "https_proxy", "NO_PROXY"}) unsetenv(name);
}

}  // namespace
}  // namespace agentckpt
