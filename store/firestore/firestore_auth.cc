#include "store/firestore/firestore_auth.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/status_macros.h"
#include "store/firestore/firestore_http.h"

namespace agentckpt {
namespace {

constexpr int64_t kRefreshMarginMs = 5 * 60 * 1000;  // refresh 5 minutes before expiry
constexpr int64_t kTokenHttpTimeoutMs = 10'000;

std::string FormEscape(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

std::string Base64UrlEncode(std::string_view data) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    uint32_t n = (uint8_t(data[i]) << 16) | (uint8_t(data[i + 1]) << 8) | uint8_t(data[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i + 1 == data.size()) {
    uint32_t n = uint8_t(data[i]) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
  } else if (i + 2 == data.size()) {
    uint32_t n = (uint8_t(data[i]) << 16) | (uint8_t(data[i + 1]) << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
  }
  return out;
}

StatusOr<std::string> SignJwtRs256(const std::string& header_json, const std::string& claims_json,
                                   const std::string& private_key_pem) {
  std::string signing_input = Base64UrlEncode(header_json) + "." + Base64UrlEncode(claims_json);
  BIO* bio = BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size()));
  if (bio == nullptr) return InternalError("cannot allocate a BIO");
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (key == nullptr) return InvalidArgumentError("private_key: not a PEM private key");
  if (EVP_PKEY_base_id(key) != EVP_PKEY_RSA) {
    EVP_PKEY_free(key);
    return InvalidArgumentError("private_key: not an RSA key");
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::string sig;
  size_t sig_len = 0;
  bool ok = ctx != nullptr && EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
            EVP_DigestSignUpdate(ctx, signing_input.data(), signing_input.size()) == 1 &&
            EVP_DigestSignFinal(ctx, nullptr, &sig_len) == 1;
  if (ok) {
    sig.resize(sig_len);
    ok = EVP_DigestSignFinal(ctx, reinterpret_cast<unsigned char*>(sig.data()), &sig_len) == 1;
    sig.resize(sig_len);
  }
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  if (!ok) return InternalError("RS256 signing failed");
  return signing_input + "." + Base64UrlEncode(sig);
}

StatusOr<std::string> CachingTokenSource::AccessToken() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!token_.empty() && env_->NowUnixMillis() < refresh_at_unix_ms_) return token_;
  ASSIGN_OR_RETURN(Token t, Fetch());
  token_ = std::move(t.access_token);
  refresh_at_unix_ms_ = env_->NowUnixMillis() + t.expires_in_s * 1000 - kRefreshMarginMs;
  return token_;
}

void CachingTokenSource::Invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  token_.clear();
  refresh_at_unix_ms_ = 0;
}

StatusOr<CachingTokenSource::Token> CachingTokenSource::ParseTokenReply(
    int http_status, const std::string& body, const std::string& endpoint) {
  auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (http_status != 200) {
    // OAuth errors: {"error": "invalid_grant", "error_description": "..."}; no token inside.
    std::string reason;
    if (j.is_object() && j.contains("error") && j["error"].is_string()) {
      reason = j["error"].get<std::string>();
      if (j.contains("error_description") && j["error_description"].is_string()) {
        reason += ": " + j["error_description"].get<std::string>();
      }
    }
    std::string msg = "token endpoint " + endpoint + " answered HTTP " +
                      std::to_string(http_status) + (reason.empty() ? "" : " (" + reason + ")");
    if (http_status >= 500 || http_status == 429) return UnavailableError(msg);
    return UnauthenticatedError(msg);
  }
  if (!j.is_object() || !j.contains("access_token") || !j["access_token"].is_string()) {
    return UnauthenticatedError("token endpoint " + endpoint + " returned no access_token");
  }
  Token t;
  t.access_token = j["access_token"].get<std::string>();
  t.expires_in_s = j.contains("expires_in") && j["expires_in"].is_number_integer()
                       ? j["expires_in"].get<int64_t>()
                       : 3600;
  return t;
}

StatusOr<std::unique_ptr<ServiceAccountTokenSource>> ServiceAccountTokenSource::FromJson(
    const std::string& key_json, Env* env) {
  auto j = nlohmann::json::parse(key_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgumentError("service-account key: not a JSON object");
  auto field = [&](const char* name, std::string* out) -> Status {
    if (!j.contains(name) || !j[name].is_string() || j[name].get<std::string>().empty()) {
      return InvalidArgumentError(std::string("service-account key: missing ") + name);
    }
    *out = j[name].get<std::string>();
    return OkStatus();
  };
  std::string type;
  RETURN_IF_ERROR(field("type", &type));
  if (type != "service_account") {
    return InvalidArgumentError("service-account key: type is \"" + type +
                                "\", expected \"service_account\"");
  }
  std::unique_ptr<ServiceAccountTokenSource> s(new ServiceAccountTokenSource(env));
  RETURN_IF_ERROR(field("client_email", &s->client_email_));
  RETURN_IF_ERROR(field("private_key", &s->private_key_));
  if (!field("token_uri", &s->token_uri_).ok()) {
    s->token_uri_ = "https://oauth2.googleapis.com/token";
  }
  (void)field("private_key_id", &s->private_key_id_);
  return s;
}

StatusOr<std::string> ServiceAccountTokenSource::MakeAssertion() {
  int64_t now_s = env_->NowUnixMillis() / 1000;
  nlohmann::json header = {{"alg", "RS256"}, {"typ", "JWT"}};
  if (!private_key_id_.empty()) header["kid"] = private_key_id_;
  nlohmann::json claims = {{"iss", client_email_},
                           {"scope", kDatastoreScope},
                           {"aud", token_uri_},
                           {"iat", now_s},
                           {"exp", now_s + 3600}};
  return SignJwtRs256(header.dump(), claims.dump(), private_key_);
}

StatusOr<CachingTokenSource::Token> ServiceAccountTokenSource::Fetch() {
  ASSIGN_OR_RETURN(std::string assertion, MakeAssertion());
  std::string form = "grant_type=" + FormEscape("urn:ietf:params:oauth:grant-type:jwt-bearer") +
                     "&assertion=" + FormEscape(assertion);
  ASSIGN_OR_RETURN(HttpReply reply,
                   HttpOnce("POST", token_uri_, {}, form, "application/x-www-form-urlencoded",
                            kTokenHttpTimeoutMs));
  return ParseTokenReply(reply.status, reply.body, token_uri_);
}

StatusOr<CachingTokenSource::Token> MetadataServerTokenSource::Fetch() {
  std::string url = "http://" + host_ +
                    "/computeMetadata/v1/instance/service-accounts/default/token?scopes=" +
                    FormEscape(kDatastoreScope);
  // Never through a proxy: the metadata server answers only on the node's own link.
  ASSIGN_OR_RETURN(HttpReply reply, HttpOnce("GET", url, {{"Metadata-Flavor", "Google"}}, "", "",
                                             kTokenHttpTimeoutMs, ProxyUse::kNever));
  return ParseTokenReply(reply.status, reply.body, "metadata server " + host_);
}

StatusOr<std::unique_ptr<TokenSource>> MakeDefaultTokenSource(Env* env) {
  if (env == nullptr) env = Env::Default();
  const char* path = std::getenv("GOOGLE_APPLICATION_CREDENTIALS");
  if (path != nullptr && *path != '\0') {
    auto text = env->ReadFile(path);
    if (!text.ok()) {
      return Status(text.status().code(),
                    std::string("GOOGLE_APPLICATION_CREDENTIALS: cannot read ") + path);
    }
    ASSIGN_OR_RETURN(auto source, ServiceAccountTokenSource::FromJson(*text, env));
    return std::unique_ptr<TokenSource>(std::move(source));
  }
  const char* host = std::getenv("GCE_METADATA_HOST");
  return std::unique_ptr<TokenSource>(std::make_unique<MetadataServerTokenSource>(
      host != nullptr && *host != '\0' ? host : "metadata.google.internal", env));
}

}  // namespace agentckpt
