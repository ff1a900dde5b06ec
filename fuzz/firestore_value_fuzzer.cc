// Fuzzes the Firestore value codec (store/firestore_value.h) with arbitrary JSON: as a single
// Firestore Value, as a checkpoint document's fields, and as plain JSON to encode.
//
// Invariants: nothing crashes, throws or leaks; a decoded value that encodes again decodes back
// to itself; an integerValue string decodes only if it is a plain decimal, and a negative one
// never turns positive; fields that decode to a checkpoint survive seal -> encode -> decode
// unchanged; encoding plain JSON is idempotent through a decode.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "checkpoint/canonical.h"
#include "store/firestore/firestore_value.h"

namespace {

using namespace agentckpt;
using nlohmann::json;

void Require(bool ok, const char* what, const json& input) {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s\ninput: %s\n", what,
               input.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  std::abort();
}

bool IsPlainDecimal(const std::string& s) {
  size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

void FuzzValue(const json& input) {
  auto decoded = FirestoreValueToJson(input, "v");
  if (!decoded.ok()) return;
  if (input.is_object() && input.size() == 1 && input.contains("integerValue") &&
      input["integerValue"].is_string()) {
    const std::string& s = input["integerValue"].get_ref<const std::string&>();
    Require(IsPlainDecimal(s), "only a plain decimal decodes as an integer", input);
    Require(decoded->is_number_integer(), "an integer decodes to an integer", input);
    bool negative = decoded->is_number_integer() && !decoded->is_number_unsigned() &&
                    decoded->get<int64_t>() < 0;
    bool zero = s.find_first_not_of("-0") == std::string::npos;
    Require(negative == (s[0] == '-' && !zero), "the sign of an integer survives decoding", input);
  }
  auto encoded = JsonToFirestoreValue(*decoded, "");
  if (!encoded.ok()) return;  // e.g. a doubleValue: the checkpoint schema has no floats
  auto again = FirestoreValueToJson(*encoded, "v");
  Require(again.ok() && *again == *decoded, "decode(encode(decode(x))) == decode(x)", input);
}

void FuzzCheckpointFields(const json& input) {
  auto cp = CheckpointFromFirestoreFields(input);
  if (!cp.ok()) {
    Require(cp.status().code() == StatusCode::kDataLoss, "a bad document is kDataLoss", input);
    return;
  }
  auto sealed = Seal(*cp);
  Require(sealed.ok(), "a decoded checkpoint seals", input);
  Require(sealed->doc == *cp, "a verified checkpoint seals to itself", input);
  auto fields = CheckpointToFirestoreFields(*sealed);
  Require(fields.ok(), "a sealed checkpoint encodes", input);
  auto back = CheckpointFromFirestoreFields(*fields);
  Require(back.ok() && *back == *cp, "checkpoint fields round-trip", input);
}

void FuzzPlainJson(const json& input) {
  auto encoded = JsonToFirestoreValue(input, "");
  if (!encoded.ok()) return;
  auto decoded = FirestoreValueToJson(*encoded, "");
  Require(decoded.ok(), "an encoded value decodes", input);
  auto reencoded = JsonToFirestoreValue(*decoded, "");
  Require(reencoded.ok() && *reencoded == *encoded, "encode(decode(encode(x))) == encode(x)",
          input);
  if (input.is_object()) {
    auto fields = JsonToFirestoreFields(input);
    Require(fields.ok(), "an encodable object encodes as fields", input);
    auto object = FirestoreFieldsToJson(*fields, "");
    Require(object.ok() && *object == *decoded, "fields decode like the map value", input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  json input = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (input.is_discarded()) return 0;
  FuzzValue(input);
  FuzzCheckpointFields(input);
  FuzzPlainJson(input);
  return 0;
}
