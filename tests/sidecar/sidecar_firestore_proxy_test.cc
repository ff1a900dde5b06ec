// The sidecar with a Firestore store behind an egress proxy: Debian's tinyproxy (a real forward
// proxy, a child process) between the `agentckpt` binary and the Firestore emulator (another
// child process). The emulator is addressed as 0.0.0.0:PORT, which Linux connects to on loopback,
// because a loopback name would be reached directly (docs/firestore.md, "Egress proxy").
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/firestore/emulator_process.h"
#include "tests/firestore/tinyproxy_process.h"
#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

class SidecarFirestoreProxyTest : public SidecarEnvTest {
 protected:
  void SetUp() override {
    SidecarEnvTest::SetUp();
    Status s = emulator_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = proxy_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  std::map<std::string, std::string> ProxiedFirestoreEnv(const std::string& proxy) const {
    return {{"CKPT_STORE", "firestore://projects/proxied/databases/(default)"},
            {"FIRESTORE_EMULATOR_HOST", "0.0.0.0:" + std::to_string(emulator_.port())},
            {"http_proxy", proxy},
            {"no_proxy", ""},
            {"NO_PROXY", ""}};
  }
  // Polls /readyz (bounded: 600 polls 50 ms apart) until it answers 200; the last reply.
  HttpReply WaitReady() {
    HttpReply r;
    for (int i = 0; i < 600; ++i) {
      r = HttpCall(port_, "GET", "/readyz");
      if (r.status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return r;
  }

  EmulatorProcess emulator_;
  TinyproxyProcess proxy_;
};

TEST_F(SidecarFirestoreProxyTest, AcknowledgedStateGoesThroughTheProxyAndSurvivesSigkill) {
  auto first = StartSidecar(ProxiedFirestoreEnv(proxy_.url()));
  ASSERT_EQ(WaitReady().status, 200) << first->Describe();
  EXPECT_NE(first->Stdout().find("\"proxy\":\"" + proxy_.url() + " (http_proxy/HTTP_PROXY)\""),
            std::string::npos)
      << first->Stdout();
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
            200);
  const HttpReply created = HttpCall(port_, "POST", "/v1/checkpoints", "{}");
  ASSERT_EQ(created.status, 201) << created.body;
  json changed = json::parse(FixtureContextBody("checkpoint-16k.json"));
  changed["activeTask"]["title"] = "acknowledged after the checkpoint, through the proxy";
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", changed.dump()).status, 200);
  const HttpReply acknowledged = HttpCall(port_, "GET", "/v1/context");
  ASSERT_EQ(acknowledged.status, 200);
  EXPECT_EQ(first->Signal(SIGKILL), 128 + SIGKILL);

  // The proxy's own log: the sidecar's requests reached the emulator through it.
  const std::string emulator = "http://0.0.0.0:" + std::to_string(emulator_.port()) + "/v1/";
  std::vector<std::string> logged = proxy_.LoggedRequests();
  ASSERT_FALSE(logged.empty());
  for (const std::string& line : logged) {
    EXPECT_NE(line.find(" " + emulator + "projects/proxied/"), std::string::npos) << line;
  }

  auto second = StartSidecar(ProxiedFirestoreEnv(proxy_.url()));
  ASSERT_EQ(WaitReady().status, 200) << second->Describe();
  const HttpReply restored = HttpCall(port_, "GET", "/v1/context");
  ASSERT_EQ(restored.status, 200) << restored.body;
  EXPECT_EQ(json::parse(restored.body), json::parse(acknowledged.body));
  const std::string id = json::parse(created.body)["checkpointId"].get<std::string>();
  const HttpReply stored = HttpCall(port_, "GET", "/v1/checkpoints/" + id);
  EXPECT_EQ(stored.status, 200) << stored.body;
  EXPECT_EQ(second->Signal(SIGTERM, 30000), 0) << second->Describe();
}

TEST_F(SidecarFirestoreProxyTest, AnUnusableProxyStopsTheSidecarAtStartWithItsName) {
  SidecarProcess sidecar(SidecarEnv(ProxiedFirestoreEnv("socks5://user:hunter2@proxy.corp:1080")),
                         dir_.path());
  EXPECT_EQ(sidecar.Wait(30000), 2) << sidecar.Describe();
  const std::string out = sidecar.Stdout() + sidecar.Stderr();
  EXPECT_NE(out.find("http_proxy/HTTP_PROXY: a socks5:// proxy is not supported"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("hunter2"), std::string::npos) << out;
  EXPECT_TRUE(proxy_.LoggedRequests().empty());
}

}  // namespace
}  // namespace agentckpt::testing
