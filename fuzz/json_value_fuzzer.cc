// Fuzzes checkpoint/json_value.h against nlohmann::json, its reference: a text simdjson accepts
// is one nlohmann accepts, with the same value; DumpJsonValue writes the bytes nlohmann's dump()
// writes, for parsed documents and for strings and keys made of the raw input (ill-formed UTF-8
// included).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "checkpoint/json_value.h"

namespace {

using nlohmann::json;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

std::string Reference(const json& v) {
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace agentckpt;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto fast = ParseJsonValue(text);
  json reference = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (fast.ok()) {
    // simdjson is stricter (nesting, integer range), never looser.
    Check(!reference.is_discarded(), "what simdjson parses, nlohmann parses");
    Check(*fast == reference, "both parsers give the same value");
    Check(DumpJsonValue(*fast) == Reference(*fast), "dump of a parsed document");
  }
  if (!reference.is_discarded()) {
    Check(DumpJsonValue(reference) == Reference(reference), "dump of nlohmann's document");
  }
  const std::string raw(text);
  const json wrapped = {{"text", raw}, {raw, {raw, 1, -2.5, nullptr, true}}};
  Check(DumpJsonValue(wrapped) == Reference(wrapped), "dump of raw strings and keys");
  return 0;
}
