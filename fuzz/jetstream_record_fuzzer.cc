// Fuzzes the JetStream store's decoders (store/jetstream/jetstream_record.h) with arbitrary
// bytes: the agent record, base64 and NATS header blocks. Invariants: nothing crashes or leaks;
// a record that decodes re-encodes to bytes that decode to the same record; base64 output is at
// most 3/4 of its input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "store/jetstream/jetstream_record.h"

namespace {

void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace agentckpt;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto record = DecodeAgentRecord(text);
  if (record.ok()) {
    auto again = DecodeAgentRecord(EncodeAgentRecord(*record));
    Require(again.ok() && *again == *record, "decode(encode(x)) == x");
    for (const JsCheckpointRef& ref : record->checkpoints) {
      Require(ToCheckpointInfo(record->agent_id, ref).sequence_number == ref.sequence,
              "listing keeps the sequence");
    }
  }
  auto bytes = DecodeBase64(text);
  if (bytes.ok()) Require(bytes->size() <= text.size() / 4 * 3, "base64 output size");
  auto headers = ParseNatsHeaders(text);
  for (const auto& [key, value] : headers) {
    Require(key.find("\r\n") == std::string::npos && value.find("\r\n") == std::string::npos,
            "a header holds no line break");
  }
  return 0;
}
