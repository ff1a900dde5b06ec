// Fuzzes the journal entry decoder and the fold with arbitrary bytes. Invariants checked:
// nothing crashes or leaks; an entry that decodes re-encodes to bytes that decode to the same
// entry; a fold of it never applies an entry that does not verify, and never fails; the stored
// form written directly (EncodeJournalEntry) is byte for byte the library's
// (EncodeJournalEntryWithLibrary), for any bytes as payload and id. The JSON parser the journal
// uses (checkpoint/json_value.h) has a fuzzer of its own (json_value_fuzzer.cc).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "journal/journal_entry.h"
#include "journal/journal_fold.h"

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
  JournalEntry raw;
  raw.agent_id = std::string(text.substr(0, text.size() % 17));
  raw.payload = std::string(text);
  raw.sequence = static_cast<int64_t>(size) - 3;
  raw.sha256 = std::string(text.substr(text.size() / 2));
  Require(EncodeJournalEntry(raw) == EncodeJournalEntryWithLibrary(raw),
          "EncodeJournalEntry(x) == EncodeJournalEntryWithLibrary(x)");
  auto entry = DecodeJournalEntry(text);
  auto by_library = DecodeJournalEntryWithLibrary(text);
  Require(entry.ok() == by_library.ok(), "DecodeJournalEntry accepts what the library decode does");
  if (!entry.ok()) return 0;
  Require(*entry == *by_library, "DecodeJournalEntry(x) == DecodeJournalEntryWithLibrary(x)");
  Require(EncodeJournalEntry(*entry) == EncodeJournalEntryWithLibrary(*entry),
          "the stored form of a decoded entry is the library's");
  auto again = DecodeJournalEntry(EncodeJournalEntry(*entry));
  Require(again.ok() && *again == *entry, "decode(encode(x)) == x");
  // Sealed as it is, the entry verifies; the fold applies it only if it links and applies.
  JournalEntry sealed = *entry;
  SealJournalEntry(&sealed);
  Require(VerifyJournalEntry(sealed).ok(), "a sealed entry verifies");
  Checkpoint cp;
  cp.agent_id = entry->agent_id;
  JournalFoldReport r = FoldJournal({*entry, sealed}, &cp);
  Require(r.applied <= 1, "at most one entry at sequence 1 applies");
  if (r.applied == 1) {
    Require(r.last_sha256 == sealed.sha256 ||
                (VerifyJournalEntry(*entry).ok() && r.last_sha256 == entry->sha256),
            "only a verified entry applies");
  }
  return 0;
}
