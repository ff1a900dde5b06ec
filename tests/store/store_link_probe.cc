// store_link_probe: a program that uses the store through OpenStore and nothing else, so that
// store_link_test.sh can check what a store user links (no cpprestsdk when the Firestore backend
// is switched off). `store_link_probe URL`: opens the store at URL and pings it; exit 0 when that
// works, 1 (with the error on stderr) when it does not, 2 for a bad command line.
#include <cstdio>

#include "store/checkpoint_store.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: store_link_probe URL\n");
    return 2;
  }
  auto store = agentckpt::OpenStore(argv[1]);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  agentckpt::Status ping = (*store)->Ping();
  if (!ping.ok()) {
    std::fprintf(stderr, "%s\n", ping.ToString().c_str());
    return 1;
  }
  return 0;
}
