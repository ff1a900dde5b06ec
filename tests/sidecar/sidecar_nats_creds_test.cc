// The real `agentckpt run` binary against a nats-server in operator mode (decentralized JWT
// authentication, `resolver: MEMORY`): with NATS_CREDS (a user JWT and its NKey seed) the
// sidecar connects, with and without mutual TLS, writes and publishes its events. A user JWT
// the server does not trust, and missing credential, key or certificate files, stop it with
// exit code 2 and a message naming the setting.
#include <nats/nats.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "nats/nats_connect.h"
#include "nats/nkey.h"
#include "nats/ssl_call_lock.h"
#include "tests/sidecar/nats_client_checks.h"
#include "tests/sidecar/nats_jwt.h"
#include "tests/sidecar/sidecar_test_env.h"
#include "tests/support/test_pki.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

class SidecarNatsCredsTest : public SidecarEnvTest {
 protected:
  void SetUp() override {
    SidecarEnvTest::SetUp();
    chain_ = MakeNatsOperatorSetup(auth_dir_.path());
  }
  void TearDown() override {
    server_.reset();
    SidecarEnvTest::TearDown();
  }

  // Starts the operator-mode server, with a TLS block requiring client certificates if `tls`.
  void StartServer(bool tls) {
    tls_ = tls;
    std::ofstream conf(auth_dir_.File("server.conf"));
    conf << chain_.ServerConfig();
    if (tls) {
      pki_ = MakeTestPki(auth_dir_.path());
      conf << "tls {\n  cert_file: \"" << pki_.server_cert << "\"\n  key_file: \""
           << pki_.server_key << "\"\n  ca_file: \"" << pki_.ca_cert
           << "\"\n  verify: true\n  timeout: 3\n}\n";
    }
    conf.close();
    server_ = std::make_unique<NatsServerProcess>("-c " + auth_dir_.File("server.conf"));
  }

  // The sidecar's settings for the operator-mode server, JetStream replay off (the account has
  // no JetStream).
  std::map<std::string, std::string> CredsEnv(std::map<std::string, std::string> extra) const {
    std::map<std::string, std::string> env = {{"NATS_URL", server_->url()},
                                              {"NATS_CREDS", chain_.creds_file},
                                              {"JS_STREAM", ""},
                                              {"JS_CONSUMER", ""}};
    if (tls_) {
      env["NATS_TLS_CA"] = pki_.ca_cert;
      env["NATS_TLS_CERT"] = pki_.client_cert;
      env["NATS_TLS_KEY"] = pki_.client_key;
    }
    for (const auto& [k, v] : extra) env[k] = v;
    return env;
  }

  // A client of the test's own, with the same user credentials.
  natsConnection* ConnectClient() {
    NatsAuthOptions auth;
    auth.creds_file = chain_.creds_file;
    if (tls_) {
      auth.tls_ca_file = pki_.ca_cert;
      auth.tls_cert_file = pki_.client_cert;
      auth.tls_key_file = pki_.client_key;
    }
    // The test's own client shares nats.c's TLS threading with the sidecar: it must go through
    // the serialising OpenSSL entry points too (nats/ssl_call_lock.h).
    EXPECT_TRUE(SslCallsAreSerialized());
    // A signing client: one connection in 256 is refused by a nats.c defect and tried again
    // (nats/nats_connect.h), as the sidecar does.
    auto connected = ConnectNatsUrl(server_->url(), auth);
    EXPECT_TRUE(connected.ok()) << connected.status().ToString();
    return connected.ok() ? connected->release() : nullptr;
  }

  // Runs the sidecar with `env`, which must stop it at start: exit code 2, and both the error
  // on stderr and the log mention `named` (and `also`, when given).
  void ExpectBadSetting(const std::map<std::string, std::string>& env, const std::string& named,
                        const std::string& also = "") {
    SidecarProcess p(SidecarEnv(env), dir_.path());
    EXPECT_EQ(p.Wait(15000), 2) << named << "\nstdout:\n"
                                << p.Stdout() << "\nstderr:\n"
                                << p.Stderr();
    EXPECT_NE(p.Stderr().find("agentckpt run: " + named), std::string::npos) << p.Stderr();
    if (!also.empty()) {
      EXPECT_NE(p.Stderr().find(also), std::string::npos) << p.Stderr();
    }
    // The seed never shows in the error output.
    EXPECT_EQ((p.Stdout() + p.Stderr()).find(chain_.user.seed), std::string::npos);
  }

  TempDir auth_dir_;
  NatsOperatorSetup chain_;
  TestPki pki_;
  bool tls_ = false;
  std::unique_ptr<NatsServerProcess> server_;
};

TEST_F(SidecarNatsCredsTest, CredsFileAuthenticates) {
  StartServer(/*tls=*/false);
  natsConnection* nc = ConnectClient();
  ASSERT_NE(nc, nullptr);
  auto sidecar = StartSidecar(CredsEnv({}));
  ASSERT_TRUE(WaitSidecarReady(port_)) << sidecar->Stdout();
  ExpectSidecarWritesAndPublishes(port_, nc);
  EXPECT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
  EXPECT_EQ(ListCheckpoints().size(), 3u);  // manual, NATS request, pre_shutdown
  natsConnection_Destroy(nc);
}

TEST_F(SidecarNatsCredsTest, CredsFileOverMutualTls) {
  StartServer(/*tls=*/true);
  natsConnection* nc = ConnectClient();
  ASSERT_NE(nc, nullptr);
  auto sidecar = StartSidecar(CredsEnv({}));
  ASSERT_TRUE(WaitSidecarReady(port_)) << sidecar->Stdout();
  ExpectSidecarWritesAndPublishes(port_, nc);
  EXPECT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
  natsConnection_Destroy(nc);
}

TEST_F(SidecarNatsCredsTest, UntrustedUserJwtFailsClearly) {
  StartServer(/*tls=*/false);
  // A user JWT issued by an account the operator never signed.
  NKeyPair stranger = MakeNKeyPair(kNKeyAccountPrefix);
  std::ofstream(auth_dir_.File("stranger.creds"))
      << CredsFileText(UserJwt(stranger, chain_.user.public_key, "agentckpt"), chain_.user.seed);
  // A user JWT that names the trusted account as its issuer but was signed by another key.
  NKeyPair forger = stranger;
  forger.public_key = chain_.account.public_key;
  std::ofstream(auth_dir_.File("forged.creds"))
      << CredsFileText(UserJwt(forger, chain_.user.public_key, "agentckpt"), chain_.user.seed);
  // The right JWT with the seed of another user (the nonce signature does not match).
  NKeyPair other_user = MakeNKeyPair(kNKeyUserPrefix);
  std::ofstream(auth_dir_.File("wrong-seed.creds"))
      << CredsFileText(chain_.user_jwt, other_user.seed);
  for (const char* name : {"stranger.creds", "forged.creds", "wrong-seed.creds"}) {
    SCOPED_TRACE(name);
    ExpectBadSetting(CredsEnv({{"NATS_CREDS", auth_dir_.File(name)}}),
                     "NATS_CREDS: the server refused the credentials");
  }
  // The log line says the same.
  SidecarProcess p(SidecarEnv(CredsEnv({{"NATS_CREDS", auth_dir_.File("stranger.creds")}})),
                   dir_.path());
  ASSERT_EQ(p.Wait(15000), 2);
  EXPECT_NE(p.Stdout().find("NATS_CREDS: the server refused the credentials"), std::string::npos)
      << p.Stdout();
}

TEST_F(SidecarNatsCredsTest, MissingCredsKeyOrCertificateFilesAreBadSettings) {
  StartServer(/*tls=*/true);
  const std::string missing = auth_dir_.File("no-such-file");
  struct Case {
    std::string var;
    std::string flag;
  };
  const std::vector<Case> cases = {{"NATS_CREDS", "nats-creds"},
                                   {"NATS_TLS_CA", "nats-tls-ca"},
                                   {"NATS_TLS_CERT", "nats-tls-cert"},
                                   {"NATS_TLS_KEY", "nats-tls-key"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.var);
    ExpectBadSetting(CredsEnv({{c.var, missing}}), c.var + " (--" + c.flag + ")",
                     "\"" + missing + "\"");
    // A directory is not a file either.
    ExpectBadSetting(CredsEnv({{c.var, auth_dir_.path()}}), c.var + " (--" + c.flag + ")",
                     "not a regular file");
  }
  std::map<std::string, std::string> seed_env = CredsEnv({{"NATS_NKEY_SEED", missing}});
  seed_env.erase("NATS_CREDS");
  ExpectBadSetting(seed_env, "NATS_NKEY_SEED (--nats-nkey-seed)", "\"" + missing + "\"");
}

}  // namespace
}  // namespace agentckpt::testing
