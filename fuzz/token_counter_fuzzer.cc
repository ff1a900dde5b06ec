// Fuzzes the exact token counter (restore/token_counter.h) with arbitrary bytes: the count never
// exceeds the byte count of the sanitized text (every byte is a token in both encodings), the
// memoizing counter agrees with the plain one, and joining at a line break before a character that
// is not white space adds up exactly (what the counter's memo and the prompt fitter rely on).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/utf8.h"
#include "restore/token_counter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace agentckpt;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto check = [](bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "invariant broken: %s\n", what);
      std::abort();
    }
  };
  const size_t bytes = Utf8Sanitize(text).size();
  for (TokenEncoding enc : {TokenEncoding::kO200kBase, TokenEncoding::kCl100kBase}) {
    size_t n = CountTokens(text, enc);
    check(n <= bytes, "at most one token per byte");
    check((n == 0) == (size == 0), "only the empty text has no tokens");
    TokenCounter memo(enc);
    check(memo.Count(text) == n, "the memoizing counter agrees");
    check(memo.Count(text) == n, "and agrees again from its memo");
    std::string a = std::string(text.substr(0, size / 2)) + "\n";
    std::string b = "#" + std::string(text.substr(size / 2));
    check(CountTokens(a + b, enc) == CountTokens(a, enc) + CountTokens(b, enc),
          "a join at a line break before '#' adds up");
    std::string c = "\xE6\xBC\xA2" + std::string(text.substr(size / 2));  // U+6F22, CJK
    check(CountTokens(a + c, enc) == CountTokens(a, enc) + CountTokens(c, enc),
          "a join at a line break before a CJK character adds up");
  }
  return 0;
}
