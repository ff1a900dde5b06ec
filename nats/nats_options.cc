#include "nats/nats_options.h"

#include <fstream>
#include <sstream>

#include "nats/nkey.h"

namespace agentckpt {

Status NatsOptionError(const std::string& option, natsStatus s) {
  return InvalidArgumentError(option + ": " + natsStatus_GetText(s) + " (" +
                              nats_GetLastError(nullptr) + ")");
}

bool SignsNonce(const NatsAuthOptions& auth) {
  return !auth.creds_file.empty() || !auth.nkey_seed_file.empty();
}

Status ApplyNatsAuthOptions(natsOptions* opts, const NatsAuthOptions& o) {
  natsStatus s;
  if (!o.creds_file.empty() && (s = natsOptions_SetUserCredentialsFromFiles(
                                    opts, o.creds_file.c_str(), nullptr)) != NATS_OK) {
    return NatsOptionError("NATS_CREDS", s);
  }
  if (!o.nkey_seed_file.empty()) {
    std::string nkey_public = o.nkey_public;
    if (nkey_public.empty()) {
      std::ifstream in(o.nkey_seed_file);
      std::stringstream text;
      text << in.rdbuf();
      StatusOr<std::string> derived = NKeyPublicFromSeedText(text.str());
      if (!derived.ok()) {
        return InvalidArgumentError("NATS_NKEY_SEED: " + derived.status().message());
      }
      nkey_public = *derived;
    }
    if ((s = natsOptions_SetNKeyFromSeed(opts, nkey_public.c_str(), o.nkey_seed_file.c_str())) !=
        NATS_OK) {
      return NatsOptionError("NATS_NKEY_SEED", s);
    }
  }
  if (!o.user.empty() &&
      (s = natsOptions_SetUserInfo(opts, o.user.c_str(), o.password.c_str())) != NATS_OK) {
    return NatsOptionError("NATS_USER", s);
  }
  if (!o.tls_ca_file.empty() || !o.tls_cert_file.empty()) {
    if ((s = natsOptions_SetSecure(opts, true)) != NATS_OK) {
      return NatsOptionError("NATS_TLS_CA", s);
    }
  }
  if (!o.tls_ca_file.empty() &&
      (s = natsOptions_LoadCATrustedCertificates(opts, o.tls_ca_file.c_str())) != NATS_OK) {
    return NatsOptionError("NATS_TLS_CA", s);
  }
  if (!o.tls_cert_file.empty() &&
      (s = natsOptions_LoadCertificatesChain(opts, o.tls_cert_file.c_str(),
                                             o.tls_key_file.c_str())) != NATS_OK) {
    return NatsOptionError("NATS_TLS_CERT", s);
  }
  return OkStatus();
}

}  // namespace agentckpt
