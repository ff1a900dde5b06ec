// The real `agentckpt run` binary against a nats-server that requires TLS with client
// certificates and authenticated users (user/password and an NKey user): the sidecar connects,
// writes and publishes; a wrong CA or a wrong password is a clear start-up error (exit code 2).
#include <nats/nats.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "nats/nats_connect.h"
#include "nats/nkey.h"
#include "nats/ssl_call_lock.h"
#include "tests/sidecar/nats_client_checks.h"
#include "tests/sidecar/sidecar_test_env.h"
#include "tests/support/test_pki.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

class SidecarNatsTlsTest : public SidecarEnvTest {
 protected:
  void SetUp() override {
    SidecarEnvTest::SetUp();
    pki_ = MakeTestPki(pki_dir_.path());
    seed_ = EncodeNKeySeed(kNKeyUserPrefix, std::string(32, '\x31'));
    auto pub = NKeyPublicFromSeedText(seed_);
    ASSERT_TRUE(pub.ok());
    std::ofstream(pki_dir_.File("agent.nk")) << seed_ << "\n";
    std::ofstream(pki_dir_.File("tls.conf"))
        << "tls {\n  cert_file: \"" << pki_.server_cert << "\"\n  key_file: \"" << pki_.server_key
        << "\"\n  ca_file: \"" << pki_.ca_cert << "\"\n  verify: true\n  timeout: 3\n}\n"
        << "authorization {\n  users = [\n    { user: \"agent\", password: \"tls-s3cret\" }\n"
        << "    { nkey: \"" << *pub << "\" }\n  ]\n}\n";
    server_ = std::make_unique<NatsServerProcess>("-c " + pki_dir_.File("tls.conf"));
  }
  void TearDown() override {
    server_.reset();
    SidecarEnvTest::TearDown();
  }

  // The sidecar's settings for the TLS server, JetStream replay off.
  std::map<std::string, std::string> TlsEnv(std::map<std::string, std::string> extra) const {
    std::map<std::string, std::string> env = {{"NATS_URL", server_->url()},
                                              {"NATS_TLS_CA", pki_.ca_cert},
                                              {"NATS_TLS_CERT", pki_.client_cert},
                                              {"NATS_TLS_KEY", pki_.client_key},
                                              {"JS_STREAM", ""},
                                              {"JS_CONSUMER", ""}};
    for (const auto& [k, v] : extra) env[k] = v;
    return env;
  }

  // A TLS client of the test's own, as user "agent".
  natsConnection* ConnectClient() {
    NatsAuthOptions auth;
    auth.tls_ca_file = pki_.ca_cert;
    auth.tls_cert_file = pki_.client_cert;
    auth.tls_key_file = pki_.client_key;
    auth.user = "agent";
    auth.password = "tls-s3cret";
    // The test's own client shares nats.c's TLS threading with the sidecar: it must go through
    // the serialising OpenSSL entry points too (nats/ssl_call_lock.h).
    EXPECT_TRUE(SslCallsAreSerialized());
    auto connected = ConnectNatsUrl(server_->url(), auth);
    EXPECT_TRUE(connected.ok()) << connected.status().ToString();
    return connected.ok() ? connected->release() : nullptr;
  }

  TempDir pki_dir_;
  TestPki pki_;
  std::string seed_;
  std::unique_ptr<NatsServerProcess> server_;
};

TEST_F(SidecarNatsTlsTest, UserAndPasswordOverMutualTls) {
  natsConnection* nc = ConnectClient();
  ASSERT_NE(nc, nullptr);
  auto sidecar = StartSidecar(TlsEnv({{"NATS_USER", "agent"}, {"NATS_PASSWORD", "tls-s3cret"}}));
  ASSERT_TRUE(WaitSidecarReady(port_)) << sidecar->Stdout();
  ExpectSidecarWritesAndPublishes(port_, nc);
  EXPECT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
  EXPECT_EQ(ListCheckpoints().size(), 3u);  // manual, NATS request, pre_shutdown
  natsConnection_Destroy(nc);
}

TEST_F(SidecarNatsTlsTest, NKeyUserOverMutualTls) {
  natsConnection* nc = ConnectClient();
  ASSERT_NE(nc, nullptr);
  auto sidecar = StartSidecar(TlsEnv({{"NATS_NKEY_SEED", pki_dir_.File("agent.nk")}}));
  ASSERT_TRUE(WaitSidecarReady(port_)) << sidecar->Stdout();
  ExpectSidecarWritesAndPublishes(port_, nc);
  EXPECT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
  natsConnection_Destroy(nc);
}

TEST_F(SidecarNatsTlsTest, WrongCaWrongPasswordOrNoTlsFailClearly) {
  struct Case {
    std::map<std::string, std::string> env;
    std::string named;
  };
  const std::vector<Case> cases = {
      // The server's certificate is not signed by the CA the sidecar trusts.
      {TlsEnv({{"NATS_TLS_CA", pki_.other_ca_cert},
               {"NATS_USER", "agent"},
               {"NATS_PASSWORD", "tls-s3cret"}}),
       "NATS_TLS_CA"},
      {TlsEnv({{"NATS_USER", "agent"}, {"NATS_PASSWORD", "wrong"}}), "NATS_PASSWORD"},
  };
  for (const Case& c : cases) {
    SidecarProcess p(SidecarEnv(c.env), dir_.path());
    EXPECT_EQ(p.Wait(15000), 2) << c.named << "\n" << p.Stdout();
    EXPECT_NE(p.Stderr().find(c.named), std::string::npos) << p.Stderr();
    // The password never shows in the error output.
    EXPECT_EQ((p.Stdout() + p.Stderr()).find("tls-s3cret"), std::string::npos);
  }
  // Without a client certificate the server drops the connection after the handshake: no
  // silent plain-text fallback, the sidecar does not run. (It exits with 1 and "Connection
  // Closed" rather than a setting-naming exit 2: nats.c reports no TLS error in this case.)
  std::map<std::string, std::string> no_cert =
      TlsEnv({{"NATS_USER", "agent"}, {"NATS_PASSWORD", "tls-s3cret"}});
  no_cert.erase("NATS_TLS_CERT");
  no_cert.erase("NATS_TLS_KEY");
  SidecarProcess p(SidecarEnv(no_cert), dir_.path());
  int code = p.Wait(15000);
  EXPECT_TRUE(code == 1 || code == 2) << code << p.Stdout() << p.Stderr();
}

}  // namespace
}  // namespace agentckpt::testing
