#include "tests/sidecar/nats_jwt.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <string_view>

#include "nats/nkey.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "nats_jwt: %s\n", what);
  std::abort();
}

std::string Base64Url(std::string_view in) {
  static constexpr char kChars[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : in) {
    buffer = (buffer << 8) | static_cast<uint8_t>(c);
    bits += 8;
    while (bits >= 6) {
      out += kChars[(buffer >> (bits - 6)) & 63];
      bits -= 6;
    }
  }
  if (bits > 0) out += kChars[(buffer << (6 - bits)) & 63];
  return out;
}

std::string Sha256UpperHex(std::string_view in) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(in.data(), in.size(), digest, &n, EVP_sha256(), nullptr) != 1) {
    Die("EVP_Digest failed");
  }
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

std::string Ed25519Sign(const std::string& raw_seed, std::string_view data) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr,
                                   reinterpret_cast<const unsigned char*>(raw_seed.data()),
                                   raw_seed.size()),
      &EVP_PKEY_free);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  unsigned char sig[64];
  size_t sig_len = sizeof(sig);
  if (!key || !ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), sig, &sig_len, reinterpret_cast<const unsigned char*>(data.data()),
                     data.size()) != 1) {
    Die("Ed25519 signing failed");
  }
  return std::string(reinterpret_cast<const char*>(sig), sig_len);
}

std::string Dump(const json& j) { return j.dump(); }

}  // namespace

NKeyPair MakeNKeyPair(uint8_t public_prefix) {
  NKeyPair p;
  p.raw_seed.resize(32);
  if (RAND_bytes(reinterpret_cast<unsigned char*>(p.raw_seed.data()), 32) != 1) {
    Die("RAND_bytes failed");
  }
  p.seed = EncodeNKeySeed(public_prefix, p.raw_seed);
  auto pub = NKeyPublicFromSeedText(p.seed);
  if (!pub.ok()) Die("cannot derive the public key of a fresh seed");
  p.public_key = *pub;
  return p;
}

std::string SignNatsJwt(const NKeyPair& issuer, json claims) {
  claims["iss"] = issuer.public_key;
  claims["iat"] = static_cast<int64_t>(std::time(nullptr));
  claims.erase("jti");
  claims["jti"] = Sha256UpperHex(Dump(claims));
  std::string to_sign =
      Base64Url(Dump({{"typ", "JWT"}, {"alg", "ed25519-nkey"}})) + "." + Base64Url(Dump(claims));
  return to_sign + "." + Base64Url(Ed25519Sign(issuer.raw_seed, to_sign));
}

std::string OperatorJwt(const NKeyPair& op, const std::string& system_account) {
  json nats = {{"type", "operator"}, {"version", 2}};
  if (!system_account.empty()) nats["system_account"] = system_account;
  return SignNatsJwt(op,
                     {{"sub", op.public_key}, {"name", "agentckpt-test-operator"}, {"nats", nats}});
}

std::string AccountJwt(const NKeyPair& op, const std::string& account_public,
                       const std::string& name) {
  json limits = {{"subs", -1},    {"data", -1}, {"payload", -1},     {"imports", -1},
                 {"exports", -1}, {"conn", -1}, {"wildcards", true}, {"leaf", -1}};
  json nats = {{"limits", limits},
               {"default_permissions", {{"pub", json::object()}, {"sub", json::object()}}},
               {"type", "account"},
               {"version", 2}};
  return SignNatsJwt(op, {{"sub", account_public}, {"name", name}, {"nats", nats}});
}

std::string UserJwt(const NKeyPair& account, const std::string& user_public,
                    const std::string& name) {
  json nats = {{"pub", json::object()}, {"sub", json::object()}, {"subs", -1},  {"data", -1},
               {"payload", -1},         {"type", "user"},        {"version", 2}};
  return SignNatsJwt(account, {{"sub", user_public}, {"name", name}, {"nats", nats}});
}

std::string CredsFileText(const std::string& user_jwt, const std::string& user_seed) {
  return "-----BEGIN NATS USER JWT-----\n" + user_jwt +
         "\n------END NATS USER JWT------\n\n"
         "************************* IMPORTANT *************************\n"
         "NKEY Seed printed below can be used to sign and prove identity.\n"
         "NKEYs are sensitive and should be treated as secrets.\n\n"
         "-----BEGIN USER NKEY SEED-----\n" +
         user_seed +
         "\n------END USER NKEY SEED------\n\n"
         "*************************************************************\n";
}

std::string NatsOperatorSetup::ServerConfig() const {
  return "operator: \"" + operator_jwt_file + "\"\n" + "system_account: \"" +
         system_account.public_key + "\"\n" + "resolver: MEMORY\n" + "resolver_preload: {\n  " +
         system_account.public_key + ": \"" + system_account_jwt + "\"\n  " + account.public_key +
         ": \"" + account_jwt + "\"\n}\n";
}

NatsOperatorSetup MakeNatsOperatorSetup(const std::string& dir) {
  NatsOperatorSetup s;
  s.op = MakeNKeyPair(kNKeyOperatorPrefix);
  s.system_account = MakeNKeyPair(kNKeyAccountPrefix);
  s.account = MakeNKeyPair(kNKeyAccountPrefix);
  s.user = MakeNKeyPair(kNKeyUserPrefix);
  s.operator_jwt = OperatorJwt(s.op, s.system_account.public_key);
  s.system_account_jwt = AccountJwt(s.op, s.system_account.public_key, "SYS");
  s.account_jwt = AccountJwt(s.op, s.account.public_key, "agents");
  s.user_jwt = UserJwt(s.account, s.user.public_key, "agentckpt");
  s.operator_jwt_file = dir + "/operator.jwt";
  s.creds_file = dir + "/user.creds";
  std::ofstream(s.operator_jwt_file) << s.operator_jwt << "\n";
  std::ofstream(s.creds_file) << CredsFileText(s.user_jwt, s.user.seed);
  return s;
}

}  // namespace agentckpt::testing
