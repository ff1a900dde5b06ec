#include "nats/nats_connect.h"

#include "common/status_macros.h"
#include "nats/ssl_call_lock.h"

namespace agentckpt {

natsStatus ConnectRetryingRefusedSignature(natsOptions* opts, int attempts, natsConnection** nc,
                                           int* connections) {
  natsStatus s = NATS_ERR;
  int made = 0;
  do {
    ++made;
    s = natsConnection_Connect(nc, opts);
  } while (s == NATS_CONNECTION_AUTH_FAILED && made < attempts);
  if (connections != nullptr) *connections = made;
  return s;
}

std::string RedactNatsUrl(const std::string& url) {
  size_t at = url.rfind('@');
  if (at == std::string::npos) return url;
  size_t scheme = url.find("://");
  size_t start = scheme == std::string::npos || scheme > at ? 0 : scheme + 3;
  return url.substr(0, start) + "***" + url.substr(at);
}

std::string NatsErrorDetail(natsStatus s) {
  const char* text = nats_GetLastError(nullptr);
  if (text != nullptr && *text != '\0') return text;
  return natsStatus_GetText(s);
}

StatusOr<nats_handles::OptionsPtr> NewNatsOptions(const std::string& url,
                                                  const NatsAuthOptions& auth) {
  natsOptions* raw = nullptr;
  if (natsOptions_Create(&raw) != NATS_OK) return InternalError("natsOptions_Create failed");
  nats_handles::OptionsPtr opts(raw);
  natsStatus s = natsOptions_SetURL(opts.get(), url.c_str());
  if (s != NATS_OK) return NatsOptionError("NATS_URL", s);
  RETURN_IF_ERROR(ApplyNatsAuthOptions(opts.get(), auth));
  // nats.c reads and writes one OpenSSL connection from two threads (ssl_call_lock.h).
  (void)SslCallsAreSerialized();
  return opts;
}

StatusOr<nats_handles::ConnectionPtr> ConnectWithOptions(natsOptions* opts, const std::string& url,
                                                         const NatsAuthOptions& auth) {
  // A client that signs the server's nonce tries again before it calls its credentials
  // refused (nats.c drops one signature in 256, see the header).
  natsConnection* nc = nullptr;
  natsStatus s =
      ConnectRetryingRefusedSignature(opts, SignsNonce(auth) ? kSignedConnectAttempts : 1, &nc);
  if (s == NATS_CONNECTION_AUTH_FAILED) {
    return UnauthenticatedError("NATS refused the credentials: " + NatsErrorDetail(s));
  }
  if (s != NATS_OK) {
    return UnavailableError("cannot connect to NATS at " + RedactNatsUrl(url) + ": " +
                            NatsErrorDetail(s));
  }
  return nats_handles::ConnectionPtr(nc);
}

StatusOr<nats_handles::ConnectionPtr> ConnectNatsUrl(const std::string& url,
                                                     const NatsAuthOptions& auth) {
  ASSIGN_OR_RETURN(nats_handles::OptionsPtr opts, NewNatsOptions(url, auth));
  return ConnectWithOptions(opts.get(), url, auth);
}

StatusOr<nats_handles::ConnectionPtr> ConnectNatsOnce(const std::string& url,
                                                      const NatsAuthOptions& auth,
                                                      const std::string& client_name,
                                                      int timeout_ms) {
  ASSIGN_OR_RETURN(nats_handles::OptionsPtr opts, NewNatsOptions(url, auth));
  natsOptions_SetName(opts.get(), client_name.c_str());
  natsOptions_SetTimeout(opts.get(), timeout_ms);
  natsOptions_SetAllowReconnect(opts.get(), false);
  return ConnectWithOptions(opts.get(), url, auth);
}

}  // namespace agentckpt
