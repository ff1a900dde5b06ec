// Internals of restore/token_counter.h: one BPE encoding (its embedded rank table and its
// pre-tokenizer regex), loaded once per process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "restore/token_counter.h"

struct pcre2_real_code_8;

namespace agentckpt::token_internal {

class BpeEncoding {
 public:
  // The encoding, loaded (and its regex compiled) on first use. Thread-safe. Aborts with a
  // message if the embedded table is damaged or the regex does not compile (a build defect).
  static const BpeEncoding& Get(TokenEncoding encoding);

  // Tokens of `text`, which must be valid UTF-8: pre-tokenized by the regex, each piece merged.
  // A text holding a code point that PCRE2's Unicode tables do not know is charged its byte
  // count (see token_counter.h). Thread-safe.
  size_t CountValidUtf8(std::string_view text) const;

  // The encoding whose tables this is.
  TokenEncoding encoding() const { return encoding_; }

  BpeEncoding(const BpeEncoding&) = delete;
  BpeEncoding& operator=(const BpeEncoding&) = delete;

 private:
  BpeEncoding(TokenEncoding encoding, const unsigned char* data, size_t size);

  // The rank of the token with bytes [p, p + n), or -1 if there is none.
  int64_t Rank(const unsigned char* p, size_t n) const;
  // Tokens of one pre-tokenized piece.
  size_t CountPiece(const unsigned char* p, size_t n) const;
  size_t MergeShort(const unsigned char* p, size_t n) const;
  size_t MergeLong(const unsigned char* p, size_t n) const;

  TokenEncoding encoding_;
  const unsigned char* token_bytes_ = nullptr;
  std::vector<uint32_t> offsets_;  // token r is token_bytes_[offsets_[r], offsets_[r + 1])
  std::vector<uint32_t> slots_;    // open addressing: rank + 1, 0 = empty
  size_t mask_ = 0;
  pcre2_real_code_8* pattern_ = nullptr;     // the pre-tokenizer
  pcre2_real_code_8* unassigned_ = nullptr;  // \p{Cn}
};

}  // namespace agentckpt::token_internal
