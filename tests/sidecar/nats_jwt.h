// NatsJwt: decentralized NATS authentication material for tests, made in process: NKey pairs
// (operator, account, user) and the JWTs (nats-io/jwt v2 claims, header
// {"typ":"JWT","alg":"ed25519-nkey"}, Ed25519 signatures through OpenSSL) that a nats-server in
// operator mode (`operator`, `resolver: MEMORY`, `resolver_preload`) accepts, and the text of a
// .creds file. Nothing here is meant for production keys.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace agentckpt::testing {

struct NKeyPair {
  std::string raw_seed;    // the 32-byte Ed25519 seed
  std::string seed;        // "SO...", "SA...", "SU..."
  std::string public_key;  // "O...", "A...", "U..."
};

// A fresh random pair whose public key has `public_prefix` (kNKeyOperatorPrefix,
// kNKeyAccountPrefix, kNKeyUserPrefix from sidecar/nkey.h). Aborts if OpenSSL fails.
NKeyPair MakeNKeyPair(uint8_t public_prefix);

// Signs `claims` as a JWT issued by `issuer`: sets "iss", "iat" and "jti" (a hash of the
// claims), then header.payload.signature, each part base64url without padding.
std::string SignNatsJwt(const NKeyPair& issuer, nlohmann::json claims);

// The operator's self-signed JWT; `system_account` (an account public key) may be empty.
std::string OperatorJwt(const NKeyPair& op, const std::string& system_account = "");
// An account JWT for `account_public`, issued by `op`, without limits.
std::string AccountJwt(const NKeyPair& op, const std::string& account_public,
                       const std::string& name);
// A user JWT for `user_public`, issued by `account`, allowed to publish and subscribe anything.
std::string UserJwt(const NKeyPair& account, const std::string& user_public,
                    const std::string& name);

// The contents of a .creds file: the user JWT and the user's seed in their decorated blocks.
std::string CredsFileText(const std::string& user_jwt, const std::string& user_seed);

// An operator-mode trust chain: operator, system account, the agent's account and one user of
// it, with the JWTs, written as files into a directory.
struct NatsOperatorSetup {
  NKeyPair op, system_account, account, user;
  std::string operator_jwt, system_account_jwt, account_jwt, user_jwt;
  std::string operator_jwt_file;  // absolute paths
  std::string creds_file;         // the user's credentials
  // The server configuration lines for this chain (operator, system_account, resolver: MEMORY,
  // resolver_preload with both accounts).
  std::string ServerConfig() const;
};

// Makes the chain and writes operator.jwt and user.creds into `dir`.
NatsOperatorSetup MakeNatsOperatorSetup(const std::string& dir);

}  // namespace agentckpt::testing
