// A fast, conservative token count for text sent to a language model: the figure is meant never
// to be below what the model's tokenizer would produce, so a prompt that fits by this count fits
// for real. Calibrated against two BPE tokenizers (Anthropic's published Claude tokenizer and
// OpenAI's cl100k_base) on the texts in tests/fixtures/tokens/: on every one of them the estimate
// is at least both real counts, and on English prose at most 1.3 times the larger one.
//
// How: the text is split into runs the way BPE pre-tokenizers split it (words, numbers,
// punctuation, whitespace, other scripts) and each run is charged by its shape: a short English
// word one token, a long or vowel-poor word (identifiers, random strings) per character, digits
// per character, each non-ASCII code point by its script (CJK, Hangul, Indic, emoji, ...), with a
// safety margin on the total. Ill-formed UTF-8 is charged one token per byte.
//
// Known limit: a text made mostly of rare CJK ideographs (outside the few thousand common ones)
// can cost up to about 3 tokens per character in real tokenizers; it is charged 1.5.
//
// Thread-safe (pure functions); O(n) in the length of the text; never throws.
#pragma once

#include <cstddef>
#include <string_view>

namespace agentckpt {

// The estimated token count of `text` (0 for an empty text).
size_t CountTokens(std::string_view text);

}  // namespace agentckpt
