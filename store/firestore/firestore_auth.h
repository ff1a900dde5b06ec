// OAuth 2.0 access tokens for Firestore, obtained the way Google's own client libraries do:
//   - a service-account JSON key (GOOGLE_APPLICATION_CREDENTIALS): an RS256-signed JWT
//     assertion exchanged at the key's token_uri (RFC 7523 jwt-bearer grant);
//   - the GKE/GCE metadata server (Workload Identity): GET
//     http://$GCE_METADATA_HOST|metadata.google.internal/computeMetadata/v1/instance/
//     service-accounts/default/token with "Metadata-Flavor: Google".
// Tokens are cached until shortly before they expire. Neither keys nor tokens are ever logged
// or put into Status messages.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "common/env.h"
#include "common/status.h"

namespace agentckpt {

inline constexpr char kDatastoreScope[] = "https://www.googleapis.com/auth/datastore";

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // A valid access token (fetched or cached). kUnauthenticated if the token endpoint refuses,
  // kUnavailable if it cannot be reached, kInvalidArgument for a malformed key. Thread-safe.
  virtual StatusOr<std::string> AccessToken() = 0;
  // Drops the cached token (e.g. after an HTTP 401). Thread-safe.
  virtual void Invalidate() = 0;
};

// base64url without padding (RFC 7515).
std::string Base64UrlEncode(std::string_view data);

// Signs `header_json`.`claims_json` as a compact JWS with RS256 using a PEM private key
// (PKCS#8 or PKCS#1). kInvalidArgument if the key does not load or is not RSA.
StatusOr<std::string> SignJwtRs256(const std::string& header_json, const std::string& claims_json,
                                   const std::string& private_key_pem);

// Shared caching logic: subclasses fetch, this class caches until `refresh_margin` before expiry.
class CachingTokenSource : public TokenSource {
 public:
  explicit CachingTokenSource(Env* env) : env_(env ? env : Env::Default()) {}
  StatusOr<std::string> AccessToken() override;
  void Invalidate() override;

 protected:
  struct Token {
    std::string access_token;
    int64_t expires_in_s = 0;
  };
  virtual StatusOr<Token> Fetch() = 0;
  // Parses {"access_token": ..., "expires_in": ...} from a token endpoint reply.
  static StatusOr<Token> ParseTokenReply(int http_status, const std::string& body,
                                         const std::string& endpoint);
  Env* env_;

 private:
  std::mutex mu_;
  std::string token_;
  int64_t refresh_at_unix_ms_ = 0;
};

class ServiceAccountTokenSource final : public CachingTokenSource {
 public:
  // Parses a service-account key file's JSON (type, client_email, private_key, private_key_id,
  // token_uri). kInvalidArgument naming the missing field; the key itself is never echoed.
  static StatusOr<std::unique_ptr<ServiceAccountTokenSource>> FromJson(const std::string& key_json,
                                                                       Env* env);
  // The signed assertion for the current time (exposed for tests).
  StatusOr<std::string> MakeAssertion();
  const std::string& client_email() const { return client_email_; }
  const std::string& token_uri() const { return token_uri_; }

 private:
  explicit ServiceAccountTokenSource(Env* env) : CachingTokenSource(env) {}
  StatusOr<Token> Fetch() override;
  std::string client_email_, private_key_, private_key_id_, token_uri_;
};

class MetadataServerTokenSource final : public CachingTokenSource {
 public:
  // `host` like "metadata.google.internal" or "127.0.0.1:8080" (plain HTTP).
  MetadataServerTokenSource(std::string host, Env* env)
      : CachingTokenSource(env), host_(std::move(host)) {}

 private:
  StatusOr<Token> Fetch() override;
  std::string host_;
};

// The token source Google's clients would pick: GOOGLE_APPLICATION_CREDENTIALS if set (read
// through `env`), else the metadata server at $GCE_METADATA_HOST or metadata.google.internal.
StatusOr<std::unique_ptr<TokenSource>> MakeDefaultTokenSource(Env* env);

}  // namespace agentckpt
