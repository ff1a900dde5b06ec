// fidelity_writer HOST:PORT PROJECT: writes checkpoints into a Firestore (emulator) with
// FirestoreStore and prints the full JSON documents it wrote, as a JSON array, on stdout. The
// fidelity test reads them back with Google's official Node client and compares.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/canonical.h"
#include "tests/firestore/emulator_process.h"
#include "tests/support/fixtures.h"

int main(int argc, char** argv) {
  using namespace agentckpt;
  if (argc != 3) {
    std::fprintf(stderr, "usage: fidelity_writer HOST:PORT PROJECT\n");
    return 2;
  }
  auto store = testing::OpenEmulatorStore(argv[1], argv[2]);
  if (store == nullptr) return 1;
  std::vector<Checkpoint> docs = {testing::LoadFixtureCheckpoint("checkpoint-16k.json"),
                                  testing::LoadFixtureCheckpoint("checkpoint-max.json")};
  docs[1].agent_id = docs[0].agent_id + "-max";
  docs[1].timestamp_ms += 1;  // a non-zero millisecond fraction
  for (int seq = 1; seq <= 3; ++seq) docs.push_back(testing::MakeCheckpoint("agent-fidelity", seq));
  nlohmann::json out = nlohmann::json::array();
  for (Checkpoint& cp : docs) {
    auto sealed = Seal(cp);
    if (!sealed.ok()) {
      std::fprintf(stderr, "seal: %s\n", sealed.status().ToString().c_str());
      return 1;
    }
    auto put = store->Put(*sealed, {});
    if (!put.ok()) {
      std::fprintf(stderr, "put: %s\n", put.status().ToString().c_str());
      return 1;
    }
    out.push_back(nlohmann::json::parse(FullDocumentJson(*sealed)));
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
