#include "restore/token_counter_bpe.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <queue>

// The tables, embedded by restore/token_counter_tables.S (see tools/tiktoken/convert_ranks.mjs
// for their layout).
extern "C" const unsigned char agentckpt_o200k_base_bin[];
extern "C" const unsigned char agentckpt_o200k_base_bin_end[];
extern "C" const unsigned char agentckpt_cl100k_base_bin[];
extern "C" const unsigned char agentckpt_cl100k_base_bin_end[];

namespace agentckpt::token_internal {
namespace {

constexpr int64_t kNoRank = std::numeric_limits<int64_t>::max();
// Pieces up to this many bytes are merged by tiktoken's quadratic loop (fastest for short
// pieces); longer ones by an equivalent heap-based merge, so a hostile piece (a long run of
// letters) stays O(n log n).
constexpr size_t kShortPiece = 128;

[[noreturn]] void Die(const char* what, TokenEncoding encoding) {
  std::fprintf(stderr, "token counter: %s (%s): the build is damaged\n", what,
               std::string(TokenEncodingName(encoding)).c_str());
  std::abort();
}

uint32_t ReadU32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

uint64_t HashBytes(const unsigned char* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  std::memcpy(&w, p, n);
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 29);
}

pcre2_code* Compile(std::string_view pattern, TokenEncoding encoding) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &offset, nullptr);
  if (code == nullptr) Die("the pre-tokenizer regex does not compile", encoding);
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT fails
  return code;
}

// Per-thread match state: match data and a JIT stack large enough for long pieces.
struct MatchState {
  MatchState()
      : data(pcre2_match_data_create(4, nullptr)),
        context(pcre2_match_context_create(nullptr)),
        stack(pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr)) {
    if (context != nullptr && stack != nullptr) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~MatchState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
  pcre2_match_data* data;
  pcre2_match_context* context;
  pcre2_jit_stack* stack;
};

MatchState& ThreadMatchState() {
  thread_local MatchState state;
  return state;
}

}  // namespace

const BpeEncoding& BpeEncoding::Get(TokenEncoding encoding) {
  if (encoding == TokenEncoding::kCl100kBase) {
    static const BpeEncoding* cl100k = new BpeEncoding(
        encoding, agentckpt_cl100k_base_bin,
        static_cast<size_t>(agentckpt_cl100k_base_bin_end - agentckpt_cl100k_base_bin));
    return *cl100k;
  }
  static const BpeEncoding* o200k =
      new BpeEncoding(encoding, agentckpt_o200k_base_bin,
                      static_cast<size_t>(agentckpt_o200k_base_bin_end - agentckpt_o200k_base_bin));
  return *o200k;
}

BpeEncoding::BpeEncoding(TokenEncoding encoding, const unsigned char* data, size_t size)
    : encoding_(encoding) {
  if (size < 16 || std::memcmp(data, "AGTK", 4) != 0 || ReadU32(data + 4) != 1) {
    Die("the embedded rank table has no valid header", encoding);
  }
  const size_t count = ReadU32(data + 8), pattern_size = ReadU32(data + 12);
  if (16 + pattern_size + count > size) Die("the embedded rank table is truncated", encoding);
  const unsigned char* lengths = data + 16 + pattern_size;
  token_bytes_ = lengths + count;
  offsets_.resize(count + 1);
  for (size_t r = 0; r < count; ++r) offsets_[r + 1] = offsets_[r] + lengths[r];
  if (token_bytes_ + offsets_[count] != data + size)
    Die("the rank table's size is wrong", encoding);

  size_t slots = 1;
  while (slots < 2 * count) slots <<= 1;
  slots_.assign(slots, 0);
  mask_ = slots - 1;
  for (size_t r = 0; r < count; ++r) {
    size_t i = HashBytes(token_bytes_ + offsets_[r], lengths[r]) & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = static_cast<uint32_t>(r + 1);
  }
  pattern_ =
      Compile(std::string_view(reinterpret_cast<const char*>(data + 16), pattern_size), encoding);
  unassigned_ = Compile("\\p{Cn}", encoding);
}

int64_t BpeEncoding::Rank(const unsigned char* p, size_t n) const {
  for (size_t i = HashBytes(p, n) & mask_; slots_[i] != 0; i = (i + 1) & mask_) {
    uint32_t r = slots_[i] - 1;
    if (offsets_[r + 1] - offsets_[r] == n && std::memcmp(token_bytes_ + offsets_[r], p, n) == 0) {
      return r;
    }
  }
  return -1;
}

size_t BpeEncoding::CountValidUtf8(std::string_view text) const {
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  MatchState& state = ThreadMatchState();
  if (state.data == nullptr) return text.size();  // out of memory: the byte count is a bound
  const bool ascii = std::all_of(text.begin(), text.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (!ascii && pcre2_match(unassigned_, subject, text.size(), 0, PCRE2_NO_UTF_CHECK, state.data,
                            state.context) >= 0) {
    return text.size();
  }
  size_t tokens = 0, pos = 0;
  while (pos < text.size()) {
    int rc = pcre2_match(pattern_, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, state.data,
                         state.context);
    if (rc < 0) {
      // No match (impossible with these patterns: every character matches one alternative) or a
      // resource limit: charge the rest by bytes, an upper bound.
      return tokens + (text.size() - pos);
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(state.data);
    size_t start = ov[0], end = ov[1];
    if (end <= pos) return tokens + (text.size() - pos);
    tokens += start - pos;  // characters skipped by the regex (none in practice): one per byte
    tokens += CountPiece(reinterpret_cast<const unsigned char*>(text.data()) + start, end - start);
    pos = end;
  }
  return tokens;
}

size_t BpeEncoding::CountPiece(const unsigned char* p, size_t n) const {
  if (n <= 1 || Rank(p, n) >= 0) return n == 0 ? 0 : 1;
  return n <= kShortPiece ? MergeShort(p, n) : MergeLong(p, n);
}

// tiktoken's byte_pair_merge: parts start as single bytes; the adjacent pair whose bytes form
// the lowest-ranked token is merged (the leftmost one on a tie) until no pair is a token.
size_t BpeEncoding::MergeShort(const unsigned char* p, size_t n) const {
  struct Part {
    uint32_t start;
    int64_t rank;  // rank of this part joined with the next one
  };
  Part parts[kShortPiece + 1];
  size_t m = n + 1;  // parts[m - 1] is the end sentinel
  for (size_t i = 0; i < m; ++i) parts[i] = {static_cast<uint32_t>(i), kNoRank};
  auto pair_rank = [&](size_t i) -> int64_t {
    if (i + 2 >= m) return kNoRank;
    int64_t r = Rank(p + parts[i].start, parts[i + 2].start - parts[i].start);
    return r < 0 ? kNoRank : r;
  };
  for (size_t i = 0; i + 1 < m; ++i) parts[i].rank = pair_rank(i);
  while (m > 2) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < m; ++i) {
      if (parts[i].rank < parts[best].rank) best = i;
    }
    if (parts[best].rank == kNoRank) break;
    std::memmove(&parts[best + 1], &parts[best + 2], (m - best - 2) * sizeof(Part));
    --m;
    parts[best].rank = pair_rank(best);
    if (best > 0) parts[best - 1].rank = pair_rank(best - 1);
  }
  return m - 1;
}

// The same merges as MergeShort, found with a heap: entries (rank, start) are popped lowest rank
// first, leftmost on a tie; an entry whose pair has changed since it was pushed is skipped.
size_t BpeEncoding::MergeLong(const unsigned char* p, size_t n) const {
  // Parts are named by their first byte; next[s] is where the part after s starts (n: none).
  std::vector<uint32_t> next(n + 1), prev(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    next[i] = static_cast<uint32_t>(i + 1);
    prev[i] = static_cast<uint32_t>(i == 0 ? n : i - 1);  // n: none
  }
  next[n] = static_cast<uint32_t>(n);
  struct Entry {
    int64_t rank;
    uint32_t start, end;  // the pair's bytes
    bool operator>(const Entry& o) const {
      return rank != o.rank ? rank > o.rank : start > o.start;
    }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  auto push = [&](uint32_t s) {
    uint32_t second = next[s];
    if (second >= n) return;
    int64_t r = Rank(p + s, next[second] - s);
    if (r >= 0) heap.push({r, s, next[second]});
  };
  for (uint32_t s = 0; s < n; ++s) push(s);
  size_t parts = n;
  while (!heap.empty()) {
    Entry e = heap.top();
    heap.pop();
    if (!alive[e.start] || next[e.start] >= n || next[next[e.start]] != e.end) continue;
    uint32_t gone = next[e.start];
    alive[gone] = false;
    next[e.start] = next[gone];
    if (next[gone] < n) prev[next[gone]] = e.start;
    --parts;
    push(e.start);
    if (prev[e.start] < n) push(prev[e.start]);
  }
  return parts;
}

}  // namespace agentckpt::token_internal
