// UTF-8 helpers. Lengths in the checkpoint schema ("at most 200 characters") count Unicode code
// points; a cut never splits a character.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace agentckpt {

// True if `s` is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool IsValidUtf8(std::string_view s);

// Number of code points in well-formed UTF-8 `s`.
size_t Utf8Length(std::string_view s);

// The longest prefix of `s` with at most `max_chars` code points. `s` must be valid UTF-8.
std::string_view Utf8TruncateChars(std::string_view s, size_t max_chars);

// The longest prefix of `s` of at most `max_bytes` bytes that does not end inside a character.
std::string_view Utf8TruncateBytes(std::string_view s, size_t max_bytes);

// Decodes the code point at s[*i] and advances *i past it. `s` must be valid UTF-8 and *i the
// start of a character (< s.size()).
uint32_t Utf8NextCodePoint(std::string_view s, size_t* i);

// Returns `s` with every ill-formed sequence replaced by U+FFFD.
std::string Utf8Sanitize(std::string_view s);

}  // namespace agentckpt
