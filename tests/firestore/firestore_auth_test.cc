// Unit tests of Google auth for Firestore (store/firestore_auth.h): RS256 JWTs checked with
// OpenSSL, the jwt-bearer token exchange and the metadata server, both against a loopback
// cpprestsdk listener standing in for Google's endpoints.
#include "store/firestore/firestore_auth.h"

// clang-format off
// gtest before cpprest: cpprest defines a macro U that breaks gtest's templates.
#include <gtest/gtest.h>
#include <cpprest/http_listener.h>
// clang-format on
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "common/fake_env.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

using nlohmann::json;

std::string GenerateRsaKeyPem(EVP_PKEY** keep) {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  *keep = key;
  return pem;
}

std::string Base64UrlDecode(std::string s) {
  for (char& c : s) c = c == '-' ? '+' : (c == '_' ? '/' : c);
  while (s.size() % 4) s += '=';
  std::string out(s.size(), '\0');
  int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
  out.resize(static_cast<size_t>(n));
  while (!s.empty() && s.back() == '=') {
    s.pop_back();
    out.pop_back();
  }
  return out;
}

bool VerifyRs256(const std::string& jwt, EVP_PKEY* key) {
  size_t last = jwt.rfind('.');
  std::string input = jwt.substr(0, last);
  std::string sig = Base64UrlDecode(jwt.substr(last + 1));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok =
      EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

json JwtPart(const std::string& jwt, int index) {
  size_t a = jwt.find('.');
  size_t b = jwt.find('.', a + 1);
  std::string part = index == 0 ? jwt.substr(0, a) : jwt.substr(a + 1, b - a - 1);
  return json::parse(Base64UrlDecode(part));
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A loopback HTTP endpoint that records requests and answers with `reply`.
class FakeEndpoint {
 public:
  using Handler =
      std::function<std::pair<int, std::string>(web::http::http_request&, const std::string& body)>;
  explicit FakeEndpoint(Handler handler) : handler_(std::move(handler)) {
    port_ = FreePort();
    listener_ = std::make_unique<web::http::experimental::listener::http_listener>(
        "http://127.0.0.1:" + std::to_string(port_));
    listener_->support([this](web::http::http_request r) {
      std::string body = r.extract_utf8string(true).get();
      requests_.fetch_add(1);
      auto [status, text] = handler_(r, body);
      r.reply(static_cast<web::http::status_code>(status), text, "application/json");
    });
    listener_->open().wait();
  }
  ~FakeEndpoint() { listener_->close().wait(); }
  std::string host_port() const { return "127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_.load(); }

 private:
  Handler handler_;
  int port_;
  std::atomic<int> requests_{0};
  std::unique_ptr<web::http::experimental::listener::http_listener> listener_;
};

TEST(FirestoreAuthTest, Base64UrlHasNoPaddingAndUsesTheUrlAlphabet) {
  EXPECT_EQ(Base64UrlEncode(""), "");
  EXPECT_EQ(Base64UrlEncode("f"), "Zg");
  EXPECT_EQ(Base64UrlEncode("fo"), "Zm8");
  EXPECT_EQ(Base64UrlEncode("foo"), "Zm9v");
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
}

TEST(FirestoreAuthTest, SignsRs256ThatOpenSslVerifies) {
  EVP_PKEY* key = nullptr;
  std::string pem = GenerateRsaKeyPem(&key);
  auto jwt = SignJwtRs256(R"({"alg":"RS256","typ":"JWT"})", R"({"iss":"a"})", pem);
  ASSERT_TRUE(jwt.ok()) << jwt.status().ToString();
  EXPECT_TRUE(VerifyRs256(*jwt, key));
  std::string tampered = *jwt;
  tampered[tampered.find('.') + 2] ^= 1;
  EXPECT_FALSE(VerifyRs256(tampered, key));
  EVP_PKEY_free(key);
  EXPECT_EQ(SignJwtRs256("{}", "{}", "not a key").status().code(), StatusCode::kInvalidArgument);
}

TEST(FirestoreAuthTest, ServiceAccountKeyNeedsItsFieldsAndNeverEchoesTheKey) {
  auto missing = ServiceAccountTokenSource::FromJson(
      R"({"type":"service_account","private_key":"SECRET-KEY-MATERIAL"})", nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("client_email"), std::string::npos);
  EXPECT_EQ(missing.status().message().find("SECRET"), std::string::npos);
  EXPECT_FALSE(ServiceAccountTokenSource::FromJson(R"({"type":"authorized_user"})", nullptr).ok());
  EXPECT_FALSE(ServiceAccountTokenSource::FromJson("[", nullptr).ok());
}

TEST(FirestoreAuthTest, ExchangesASignedAssertionAndCachesTheToken) {
  EVP_PKEY* key = nullptr;
  std::string pem = GenerateRsaKeyPem(&key);
  std::mutex mu;
  std::string last_form, last_content_type;
  FakeEndpoint token_endpoint([&](web::http::http_request& r, const std::string& body) {
    std::lock_guard<std::mutex> lock(mu);
    last_form = body;
    last_content_type = r.headers().content_type();
    return std::make_pair(200, std::string(R"({"access_token":"ya29.tok","expires_in":3600,)"
                                           R"("token_type":"Bearer"})"));
  });
  FakeEnv env;
  json key_json = {{"type", "service_account"},
                   {"client_email", "ckpt@proj.iam.gserviceaccount.com"},
                   {"private_key", pem},
                   {"private_key_id", "kid-1"},
                   {"token_uri", "http://" + token_endpoint.host_port() + "/token"}};
  auto source = ServiceAccountTokenSource::FromJson(key_json.dump(), &env);
  ASSERT_TRUE(source.ok()) << source.status().ToString();

  auto token = (*source)->AccessToken();
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, "ya29.tok");
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(last_content_type, "application/x-www-form-urlencoded");
    const std::string grant = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer";
    ASSERT_EQ(last_form.rfind(grant + "&assertion=", 0), 0u) << last_form;
    std::string jwt = last_form.substr(grant.size() + std::string("&assertion=").size());
    EXPECT_TRUE(VerifyRs256(jwt, key));
    json header = JwtPart(jwt, 0), claims = JwtPart(jwt, 1);
    EXPECT_EQ(header["alg"], "RS256");
    EXPECT_EQ(header["kid"], "kid-1");
    EXPECT_EQ(claims["iss"], "ckpt@proj.iam.gserviceaccount.com");
    EXPECT_EQ(claims["scope"], kDatastoreScope);
    EXPECT_EQ(claims["aud"], key_json["token_uri"]);
    EXPECT_EQ(claims["iat"].get<int64_t>(), env.NowUnixMillis() / 1000);
    EXPECT_EQ(claims["exp"].get<int64_t>() - claims["iat"].get<int64_t>(), 3600);
  }
  // Cached until 5 minutes before expiry.
  env.AdvanceMicros(54LL * 60 * 1'000'000);
  EXPECT_EQ((*source)->AccessToken().value(), "ya29.tok");
  EXPECT_EQ(token_endpoint.requests(), 1);
  env.AdvanceMicros(2LL * 60 * 1'000'000);
  EXPECT_TRUE((*source)->AccessToken().ok());
  EXPECT_EQ(token_endpoint.requests(), 2);
  (*source)->Invalidate();
  EXPECT_TRUE((*source)->AccessToken().ok());
  EXPECT_EQ(token_endpoint.requests(), 3);
  EVP_PKEY_free(key);
}

TEST(FirestoreAuthTest, RefusedExchangeIsUnauthenticatedWithoutSecrets) {
  EVP_PKEY* key = nullptr;
  std::string pem = GenerateRsaKeyPem(&key);
  EVP_PKEY_free(key);
  FakeEndpoint token_endpoint([](web::http::http_request&, const std::string&) {
    return std::make_pair(400,
                          std::string(R"({"error":"invalid_grant","error_description":"bad"})"));
  });
  json key_json = {{"type", "service_account"},
                   {"client_email", "a@b"},
                   {"private_key", pem},
                   {"token_uri", "http://" + token_endpoint.host_port() + "/token"}};
  auto source = ServiceAccountTokenSource::FromJson(key_json.dump(), nullptr);
  ASSERT_TRUE(source.ok());
  auto token = (*source)->AccessToken();
  ASSERT_EQ(token.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(token.status().message().find("invalid_grant"), std::string::npos);
  EXPECT_EQ(token.status().message().find("PRIVATE KEY"), std::string::npos);
}

TEST(FirestoreAuthTest, MetadataServerTokenWithTheMetadataFlavorHeader) {
  std::atomic<bool> flavored{false};
  std::string path;
  std::mutex mu;
  FakeEndpoint metadata([&](web::http::http_request& r, const std::string&) {
    flavored = r.headers().has("Metadata-Flavor") && r.headers()["Metadata-Flavor"] == "Google";
    std::lock_guard<std::mutex> lock(mu);
    path = r.relative_uri().path();
    if (!flavored) return std::make_pair(403, std::string("{}"));
    return std::make_pair(200, std::string(R"({"access_token":"ya29.meta","expires_in":1200})"));
  });
  ::setenv("GCE_METADATA_HOST", metadata.host_port().c_str(), 1);
  ::unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
  auto source = MakeDefaultTokenSource(nullptr);
  ::unsetenv("GCE_METADATA_HOST");
  ASSERT_TRUE(source.ok());
  auto token = (*source)->AccessToken();
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, "ya29.meta");
  EXPECT_TRUE(flavored.load());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(path, "/computeMetadata/v1/instance/service-accounts/default/token");
}

TEST(FirestoreAuthTest, DefaultSourceReadsGoogleApplicationCredentials) {
  testing::TempDir dir;
  std::string path = dir.File("key.json");
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(path, R"({"type":"service_account"})").ok());
  ::setenv("GOOGLE_APPLICATION_CREDENTIALS", path.c_str(), 1);
  auto source = MakeDefaultTokenSource(nullptr);
  ::unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
  ASSERT_FALSE(source.ok());  // the key is incomplete, and the error says what is missing
  EXPECT_NE(source.status().message().find("client_email"), std::string::npos);
}

}  // namespace
}  // namespace agentckpt
