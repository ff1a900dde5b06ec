// Fuzzes the text primitives under the document: UTF-8 checks and cuts, RFC 3339 parsing.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/time_format.h"
#include "common/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace agentckpt;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto check = [](bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "invariant broken: %s\n", what);
      std::abort();
    }
  };
  std::string clean = Utf8Sanitize(text);
  check(IsValidUtf8(clean), "sanitized text is valid UTF-8");
  if (IsValidUtf8(text)) check(clean == text, "sanitizing valid text changes nothing");
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size / 2, size}) {
    check(IsValidUtf8(Utf8TruncateChars(clean, n)), "char cut stays valid");
    check(Utf8Length(Utf8TruncateChars(clean, n)) <= n, "char cut respects the limit");
    check(IsValidUtf8(Utf8TruncateBytes(clean, n)), "byte cut stays valid");
    check(Utf8TruncateBytes(clean, n).size() <= n, "byte cut respects the limit");
  }
  auto ms = ParseRfc3339Millis(text);
  if (ms.ok() && *ms >= -62135596800000LL && *ms <= 253402300799999LL) {
    auto again = ParseRfc3339Millis(FormatRfc3339Millis(*ms));
    check(again.ok() && *again == *ms, "format(parse(t)) parses back to the same instant");
  }
  return 0;
}
