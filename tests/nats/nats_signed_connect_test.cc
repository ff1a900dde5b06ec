// ConnectRetryingRefusedSignature (nats/nats_connect.h) against a small NATS server of the
// test's own that asks for a signed nonce and checks the Ed25519 signature like nats-server
// does. It chooses the nonces, so the one-in-256 case that the packaged nats.c gets wrong (a
// signature whose first byte is zero goes out empty) happens on purpose instead of by chance.
// A real nats-server cannot be told which nonce to send; the sidecar's NKey and credentials
// tests cover that server.
// It builds its natsOptions with nats.c directly (natsOptions_Create) on purpose: it checks the
// raw library defect and the retry around it, below NewNatsOptions and ConnectNatsUrl.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "nats/nats_connect.h"
#include "nats/nkey.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::testing {
namespace {

const std::string kRawSeed(32, '\x42');

// The Ed25519 signature of `message` with kRawSeed (what nats.c computes from the seed file).
std::string Sign(const std::string& message) {
  EVP_PKEY* key = EVP_PKEY_new_raw_private_key(
      EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(kRawSeed.data()), 32);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  unsigned char sig[64];
  size_t len = sizeof sig;
  EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, key);
  EVP_DigestSign(ctx, sig, &len, reinterpret_cast<const unsigned char*>(message.data()),
                 message.size());
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return std::string(reinterpret_cast<char*>(sig), len);
}

// A nonce whose signature starts with a zero byte (zero_first) or does not.
std::string NonceWhoseSignatureStartsWithZero(bool zero_first) {
  for (int i = 0; i < 100000; ++i) {
    std::string nonce = "nonce" + std::to_string(i);
    if ((Sign(nonce)[0] == '\0') == zero_first) return nonce;
  }
  ADD_FAILURE() << "no such nonce in 100000 tries";
  return "nonce";
}

// Raw URL base64 (no padding), as NATS sends the signature.
std::string Base64UrlDecode(std::string s) {
  for (char& c : s) c = c == '-' ? '+' : c == '_' ? '/' : c;
  const size_t pad = (4 - s.size() % 4) % 4;
  s.append(pad, '=');
  std::string out(s.size() / 4 * 3, '\0');
  int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
  if (n < static_cast<int>(pad)) return "";
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

// Serves one connection per nonce, in order, on 127.0.0.1: INFO with the nonce and
// auth_required, then PONG if the CONNECT carries a valid signature of the nonce by
// `expected_seed`, else -ERR 'Authorization Violation' and close. Every wait is bounded.
class SigningServer {
 public:
  SigningServer(std::vector<std::string> nonces, std::string expected_seed)
      : nonces_(std::move(nonces)), expected_seed_(std::move(expected_seed)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len), 0);
    EXPECT_EQ(::listen(listener_, 8), 0);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~SigningServer() {
    thread_.join();
    ::close(listener_);
  }
  int port() const { return port_; }
  // One entry per connection served: true if its signature was accepted.
  std::vector<bool> verdicts() {
    std::lock_guard<std::mutex> lock(mu_);
    return verdicts_;
  }

 private:
  static bool WaitReadable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 10000) == 1;
  }
  static std::string ReadLine(int fd, std::string& buffered) {
    while (buffered.find("\r\n") == std::string::npos) {
      char buf[4096];
      if (!WaitReadable(fd)) return "";
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return "";
      buffered.append(buf, static_cast<size_t>(n));
    }
    size_t end = buffered.find("\r\n");
    std::string line = buffered.substr(0, end);
    buffered.erase(0, end + 2);
    return line;
  }
  bool SignatureValid(const std::string& connect_line, const std::string& nonce) const {
    if (connect_line.rfind("CONNECT ", 0) != 0) return false;
    auto j = nlohmann::json::parse(connect_line.substr(8), nullptr, false);
    if (!j.is_object() || !j.contains("sig") || !j["sig"].is_string()) return false;
    auto pub = NKeyPublicFromSeedText(expected_seed_);
    if (!pub.ok() || j.value("nkey", "") != *pub) return false;
    return Base64UrlDecode(j["sig"].get<std::string>()) == Sign(nonce);
  }
  void Serve() {
    for (const std::string& nonce : nonces_) {
      if (!WaitReadable(listener_)) return;
      int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      std::string info = R"(INFO {"server_id":"SIGNING","version":"2.9.10","go":"go1","host":)"
                         R"("127.0.0.1","port":)" +
                         std::to_string(port_) +
                         R"(,"headers":true,"max_payload":1048576,"proto":1,)"
                         R"("auth_required":true,"nonce":")" +
                         nonce + "\"}\r\n";
      ::send(fd, info.data(), info.size(), MSG_NOSIGNAL);
      std::string buffered;
      const bool ok = SignatureValid(ReadLine(fd, buffered), nonce);
      {
        std::lock_guard<std::mutex> lock(mu_);
        verdicts_.push_back(ok);
      }
      const std::string reply = ok ? "PONG\r\n" : "-ERR 'Authorization Violation'\r\n";
      ReadLine(fd, buffered);  // the PING after CONNECT
      ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
      // An accepted client stays until it closes; answer its PINGs meanwhile.
      while (ok) {
        std::string line = ReadLine(fd, buffered);
        if (line.empty()) break;
        if (line == "PING") ::send(fd, "PONG\r\n", 6, MSG_NOSIGNAL);
      }
      ::close(fd);
    }
  }

  const std::vector<std::string> nonces_;
  const std::string expected_seed_;
  int listener_ = -1;
  int port_ = 0;
  std::mutex mu_;
  std::vector<bool> verdicts_;
  std::thread thread_;
};

class NatsSignedConnectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = EncodeNKeySeed(kNKeyUserPrefix, kRawSeed);
    seed_file_ = dir_.File("user.nk");
    std::ofstream(seed_file_) << seed_ << "\n";
  }
  // Connects to `port` signing with the test seed; returns the status, closes on success.
  natsStatus Connect(int port, int attempts, int* connections) {
    natsOptions* opts = nullptr;
    EXPECT_EQ(natsOptions_Create(&opts), NATS_OK);
    natsOptions_SetURL(opts, ("nats://127.0.0.1:" + std::to_string(port)).c_str());
    natsOptions_SetTimeout(opts, 5000);
    natsOptions_SetAllowReconnect(opts, false);
    auto pub = NKeyPublicFromSeedText(seed_);
    EXPECT_TRUE(pub.ok());
    EXPECT_EQ(natsOptions_SetNKeyFromSeed(opts, pub->c_str(), seed_file_.c_str()), NATS_OK);
    natsConnection* nc = nullptr;
    natsStatus s = ConnectRetryingRefusedSignature(opts, attempts, &nc, connections);
    natsOptions_Destroy(opts);
    if (nc != nullptr) natsConnection_Destroy(nc);
    return s;
  }

  TempDir dir_;
  std::string seed_;
  std::string seed_file_;
};

TEST_F(NatsSignedConnectTest, ARefusedZeroLeadingSignatureIsFollowedByANewConnection) {
  SigningServer server(
      {NonceWhoseSignatureStartsWithZero(true), NonceWhoseSignatureStartsWithZero(false)}, seed_);
  int connections = 0;
  EXPECT_EQ(Connect(server.port(), kSignedConnectAttempts, &connections), NATS_OK);
  std::vector<bool> verdicts = server.verdicts();
  ASSERT_FALSE(verdicts.empty());
  // The packaged nats.c sends no valid signature for this nonce; the second connection, with a
  // nonce whose signature does not start with zero, gets in.
  EXPECT_FALSE(verdicts[0]) << "this nats.c signs a zero-leading signature correctly; the "
                               "workaround in replay/nats_connect.h can go";
  EXPECT_EQ(connections, 2);
  EXPECT_EQ(verdicts, (std::vector<bool>{false, true}));
}

TEST_F(NatsSignedConnectTest, WrongCredentialsAreRefusedOnEveryConnection) {
  const std::string other_seed = EncodeNKeySeed(kNKeyUserPrefix, std::string(32, '\x07'));
  std::vector<std::string> nonces(kSignedConnectAttempts, NonceWhoseSignatureStartsWithZero(false));
  SigningServer server(nonces, other_seed);
  int connections = 0;
  EXPECT_EQ(Connect(server.port(), kSignedConnectAttempts, &connections),
            NATS_CONNECTION_AUTH_FAILED);
  EXPECT_EQ(connections, kSignedConnectAttempts);
  EXPECT_EQ(server.verdicts(), std::vector<bool>(kSignedConnectAttempts, false));
}

TEST_F(NatsSignedConnectTest, OneAttemptMakesOneConnection) {
  SigningServer server({NonceWhoseSignatureStartsWithZero(true)}, seed_);
  int connections = 0;
  EXPECT_EQ(Connect(server.port(), 1, &connections), NATS_CONNECTION_AUTH_FAILED);
  EXPECT_EQ(connections, 1);
}

TEST_F(NatsSignedConnectTest, AGoodSignatureConnectsAtOnce) {
  SigningServer server({NonceWhoseSignatureStartsWithZero(false)}, seed_);
  int connections = 0;
  EXPECT_EQ(Connect(server.port(), kSignedConnectAttempts, &connections), NATS_OK);
  EXPECT_EQ(connections, 1);
  EXPECT_EQ(server.verdicts(), std::vector<bool>{true});
}

}  // namespace
}  // namespace agentckpt::testing
