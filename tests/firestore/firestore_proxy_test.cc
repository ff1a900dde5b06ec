// FirestoreStore through an egress proxy: Debian's tinyproxy (a real forward proxy, a child
// process) between the store and the emulator (another child process). The proxy's own log is
// the record of what went through it. The store addresses the emulator as 0.0.0.0:PORT, which
// Linux connects to on loopback, because loopback names and addresses are always reached
// directly (http_proxy.h) and the traffic must stay on this machine.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "store/firestore/firestore_store.h"
#include "tests/firestore/emulator_suite.h"
#include "tests/firestore/tinyproxy_process.h"
#include "tests/store/store_test_util.h"
#include "tests/support/nats_server.h"

namespace agentckpt::testing {
namespace {

class FirestoreProxyTest : public EmulatorSuite {
 protected:
  void SetUp() override { StartTest("proxy-"); }

  std::string Endpoint() const { return "http://0.0.0.0:" + std::to_string(emulator_->port()); }

  std::unique_ptr<FirestoreStore> OpenThrough(const ProxyEnvironment& env,
                                              const std::string& endpoint = "") {
    FirestoreStoreOptions options;
    options.project_id = project_;
    options.endpoint = endpoint.empty() ? Endpoint() : endpoint;
    options.request_timeout_ms = 3000;
    options.overall_deadline_ms = 6000;
    options.initial_backoff_ms = 10;
    options.max_backoff_ms = 200;
    options.hedge_after_ms = 0;  // the proxy's log is compared with the store's request count
    options.proxy_env = env;
    auto store = FirestoreStore::Open(std::move(options));
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  static ProxyEnvironment Via(const std::string& proxy_url, const std::string& no_proxy = "") {
    ProxyEnvironment env;
    env.http_proxy = proxy_url;
    env.no_proxy = no_proxy;
    return env;
  }
};

TEST_F(FirestoreProxyTest, RequestsGoThroughTheProxy) {
  TinyproxyProcess proxy;
  Status started = proxy.Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  auto store = OpenThrough(Via(proxy.url()));
  ASSERT_NE(store, nullptr);
  STORE_ASSERT_OK(store->Put(SealedAt("agent-p", 1), PutOptions{}));
  STORE_ASSERT_OK(store->Put(SealedAt("agent-p", 2), PutOptions{}));
  auto latest = store->GetLatestVerified("agent-p");
  STORE_ASSERT_OK(latest);
  EXPECT_EQ(latest->checkpoint.sequence_number, 2);

  // tinyproxy logs the first request of each client connection and relays the rest of a
  // kept-alive connection unparsed, so its log has at least one line, not one per request.
  std::vector<std::string> logged = proxy.LoggedRequests();
  EXPECT_GE(logged.size(), 1u);
  EXPECT_LE(logged.size(), store->requests_sent());
  const std::string prefix = Endpoint() + "/v1/projects/" + project_ + "/";
  for (const std::string& line : logged) {
    EXPECT_NE(line.find(" " + prefix), std::string::npos) << line;
  }
}

TEST_F(FirestoreProxyTest, CredentialsInTheProxyUrlAreSentAndWrongOnesSaySo) {
  TinyproxyProcess proxy("ckpt", "s3cret");
  Status started = proxy.Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  const std::string host_port = std::to_string(proxy.port());
  auto store = OpenThrough(Via("http://ckpt:s3cret@127.0.0.1:" + host_port));
  ASSERT_NE(store, nullptr);
  STORE_ASSERT_OK(store->Put(SealedAt("agent-c", 1), PutOptions{}));
  EXPECT_GE(proxy.LoggedRequests().size(), 1u);

  auto refused = OpenThrough(Via("http://ckpt:n0tThePassw0rd@127.0.0.1:" + host_port));
  ASSERT_NE(refused, nullptr);
  auto put = refused->Put(SealedAt("agent-c", 2), PutOptions{});
  ASSERT_FALSE(put.ok());
  // tinyproxy answers 401 to a plain-HTTP request with wrong credentials (most proxies say 407).
  EXPECT_EQ(put.status().code(), StatusCode::kUnauthenticated) << put.status().ToString();
  EXPECT_TRUE(put.status().message().find("HTTP 401") != std::string::npos ||
              put.status().message().find("HTTP 407") != std::string::npos)
      << put.status().ToString();
  EXPECT_EQ(put.status().message().find("n0tThePassw0rd"), std::string::npos);
  // Nothing was stored by the refused request.
  auto latest = store->GetLatestVerified("agent-c");
  STORE_ASSERT_OK(latest);
  EXPECT_EQ(latest->checkpoint.sequence_number, 1);
}

TEST_F(FirestoreProxyTest, NoProxyAndLoopbackAreReachedDirectly) {
  TinyproxyProcess proxy;
  Status started = proxy.Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  auto listed = OpenThrough(Via(proxy.url(), "example.com, 0.0.0.0"));
  ASSERT_NE(listed, nullptr);
  STORE_ASSERT_OK(listed->Put(SealedAt("agent-d", 1), PutOptions{}));
  auto loopback = OpenThrough(Via(proxy.url()), "http://" + emulator_->host_port());
  ASSERT_NE(loopback, nullptr);
  STORE_ASSERT_OK(loopback->Put(SealedAt("agent-d", 2), PutOptions{}));
  EXPECT_TRUE(proxy.LoggedRequests().empty());
}

TEST_F(FirestoreProxyTest, AProxyThatIsDownMakesWritesFailAsRetryable) {
  int closed_port = PickFreePort();
  ASSERT_NE(closed_port, 0);
  auto store = OpenThrough(Via("http://127.0.0.1:" + std::to_string(closed_port)));
  ASSERT_NE(store, nullptr);
  auto put = store->Put(SealedAt("agent-e", 1), PutOptions{});
  ASSERT_FALSE(put.ok());
  EXPECT_TRUE(put.status().code() == StatusCode::kUnavailable ||
              put.status().code() == StatusCode::kDeadlineExceeded)
      << put.status().ToString();
}

TEST(FirestoreProxyOpenTest, AnUnusableProxyVariableFailsTheOpenWithItsName) {
  FirestoreStoreOptions options;
  options.project_id = "p";
  options.proxy_env.https_proxy = "socks5://proxy.corp:1080";
  auto store = FirestoreStore::Open(std::move(options));
  ASSERT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(store.status().message().find("HTTPS_PROXY"), std::string::npos)
      << store.status().ToString();
  EXPECT_NE(store.status().message().find("socks5"), std::string::npos);

  // OpenUrl reads the process's variables.
  unsetenv("FIRESTORE_EMULATOR_HOST");
  unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
  setenv("https_proxy", "http://user:hunter2@proxy.corp:70000", 1);
  auto from_env = FirestoreStore::OpenUrl("firestore://projects/p/databases/(default)");
  unsetenv("https_proxy");
  ASSERT_EQ(from_env.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(from_env.status().message().find("70000"), std::string::npos)
      << from_env.status().ToString();
  EXPECT_EQ(from_env.status().message().find("hunter2"), std::string::npos);
}

}  // namespace
}  // namespace agentckpt::testing
