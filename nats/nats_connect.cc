#include "nats/nats_connect.h"

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

}  // namespace agentckpt
