// Fuzzes checkpoint decoding and verification with arbitrary bytes. Invariants checked:
// nothing crashes or leaks; a document that decodes and seals verifies after a round trip through
// both the stored (canonical) and the exported (full document) form, to an equal checkpoint.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "checkpoint/canonical.h"
#include "checkpoint/checkpoint_json.h"

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
  (void)VerifyDocumentJson(text);
  (void)OpenSealed(text, "0000000000000000000000000000000000000000000000000000000000000000");
  auto cp = CheckpointFromJson(text);
  if (!cp.ok()) return 0;
  auto sealed = Seal(*cp);
  if (!sealed.ok()) return 0;
  auto opened = OpenSealed(sealed->canonical, sealed->doc.content_sha256);
  Require(opened.ok(), "a sealed checkpoint opens");
  Require(*opened == sealed->doc, "open(seal(x)) == seal(x)");
  auto verified = VerifyDocumentJson(FullDocumentJson(*sealed));
  Require(verified.ok(), "the exported document verifies");
  Require(*verified == sealed->doc, "verify(export(x)) == x");
  auto resealed = Seal(*opened);
  Require(resealed.ok() && resealed->canonical == sealed->canonical, "sealing is idempotent");
  return 0;
}
