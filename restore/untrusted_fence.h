// Presents untrusted bytes (replayed message bodies and subjects) inside a restoration prompt as
// fenced data that cannot end its fence early or pose as the prompt's own text.
//
// A fenced block looks like
//   <<<BEGIN UNTRUSTED DATA 5f1c0a9e77d2b6c4 seq=88213 subject="agent.a.inbox" ...>>>
//   | first line of the body
//   | second line
//   <<<END UNTRUSTED DATA 5f1c0a9e77d2b6c4>>>
// Inside it every line starts with "| ", so no body line can look like a heading, a fence line or
// a line of the prompt; the body can hold no "<<<" or ">>>" at all (a space is put between the
// second and third character of any run of three brackets pointing the same way, look-alikes such
// as U+FF1C FULLWIDTH LESS-THAN SIGN or U+2039 counted as brackets), so it cannot write a fence
// line even if it guessed the nonce; ill-formed UTF-8 becomes U+FFFD; control characters other
// than tab and newline are shown as \xNN; invisible and layout characters (zero-width, bidi
// controls, U+2028/U+2029, C1 controls such as NEL, BOM) are shown as \u{XXXX}, so nothing can
// hide a delimiter or start a line that is not seen as one. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace agentckpt {

// `s` made safe to appear inside a fence or in a fence attribute: valid UTF-8, no control
// characters except '\t' and '\n' (and not even those if `single_line`), no invisible or layout
// characters, no run of three same-way angle brackets (or look-alikes).
std::string NeutraliseUntrusted(std::string_view s, bool single_line);

// A fenced block (ends with '\n'). `nonce` identifies the block (hex); `attributes` is put in
// the opening line after neutralising (single line); `body` is neutralised and prefixed.
std::string FenceUntrusted(std::string_view nonce, std::string_view attributes,
                           std::string_view body);

}  // namespace agentckpt
