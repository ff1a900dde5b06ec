// Writing a JSON string literal, escaped exactly as nlohmann::json's dump() escapes it with
// ensure_ascii off: `"` and `\` backslash-escaped; \b \t \n \f \r for those five control
// characters; \u00xx (lowercase hex) for the other code points below U+0020; every other byte,
// U+007F and all of non-ASCII UTF-8 included, copied as it is. For code on a write path that
// builds JSON of known shape (journal/journal_entry.cc, the canonical checkpoint writer) without
// building a nlohmann::json tree first. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace agentckpt {

// Appends `s` to `*out` as a quoted JSON string. Returns false, and appends nothing, when `s`
// is not well-formed UTF-8 (common/utf8.h): nlohmann::json replaces such bytes, and a caller
// that must match it byte for byte then falls back to the library.
bool AppendJsonString(std::string_view s, std::string* out);

// The same without the UTF-8 check, for text the caller knows is well-formed UTF-8 (ill-formed
// bytes would be copied as they are, where nlohmann::json would replace them).
void AppendJsonStringUnchecked(std::string_view s, std::string* out);

}  // namespace agentckpt
