// SqliteStore's write-ahead journal (docs/journal.md): one row per entry in the `journal` table
// of the same file as the checkpoints, appended in IMMEDIATE transactions that also check the
// writer lease, so the journal is exactly as durable (WAL, synchronous=FULL) and as fenced as
// the checkpoints.
#include <sqlite3.h>

#include <algorithm>

#include "common/ids.h"
#include "common/status_macros.h"
#include "store/backend_rules.h"
#include "store/sqlite/sqlite_store.h"

namespace agentckpt {
namespace {

// Resets a statement and its bindings when the scope ends.
struct StmtGuard {
  sqlite3_stmt* s;
  ~StmtGuard() {
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
  }
};

void Bind(sqlite3_stmt* s, int i, std::string_view v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
}

std::string_view Column(sqlite3_stmt* s, int i) {
  const void* p = sqlite3_column_blob(s, i);
  return p ? std::string_view(static_cast<const char*>(p),
                              static_cast<size_t>(sqlite3_column_bytes(s, i)))
           : std::string_view();
}

// Row keys (schema version 5): an agent's slot times 2^40 plus the entry's sequence. The largest
// slot keeps (slot + 1) * 2^40 inside an int64.
constexpr int64_t kSlotSpan = int64_t{1} << 40;
// The statements below and migration 5 (sqlite_schema.cc) spell the span out as this literal.
static_assert(kSlotSpan == 1099511627776, "the SQL's slot span");
constexpr int64_t kMaxJournalSequence = kSlotSpan - 1;
constexpr int64_t kMaxJournalSlot = (int64_t{1} << 23) - 2;

int64_t JournalKey(int64_t slot, int64_t sequence) { return slot * kSlotSpan + sequence; }

}  // namespace

Status SqliteStore::PrepareJournal() {
  // An agent's entries are the rows keyed slot * 2^40 + 1 .. slot * 2^40 + 2^40 - 1 (schema
  // version 5, sqlite_schema.cc): every statement below reads or deletes one key range of the
  // table's own b-tree.
  struct {
    sqlite3_stmt** stmt;
    const char* sql;
  } prepared[] = {
      // One row even when the agent has no record yet. The high-water mark is the larger of the
      // agent record's (raised only by compaction) and the newest stored entry, so an append
      // writes the journal's own page and nothing else.
      {&journal_head_,
       "SELECT a.lease_holder, a.lease_epoch,"
       " max(coalesce(a.journal_last_sequence, 0), coalesce((SELECT sequence FROM journal"
       " WHERE entry_key > a.journal_slot * 1099511627776"
       " AND entry_key < (a.journal_slot + 1) * 1099511627776 ORDER BY entry_key DESC LIMIT 1),"
       " 0)), a.journal_slot"
       " FROM (SELECT 1) LEFT JOIN agents a ON a.agent_id = ?1"},
      {&journal_insert_,
       "INSERT INTO journal (entry_key, agent_id, sequence, size_bytes, entry)"
       " VALUES (?,?,?,?,?)"},
      // An agent's first append gives it the next free slot (creating its record if need be).
      {&journal_assign_slot_,
       "INSERT INTO agents (agent_id, updated_at_ms, journal_slot) VALUES (?1, ?2,"
       " (SELECT coalesce(max(journal_slot), 0) + 1 FROM agents))"
       " ON CONFLICT (agent_id) DO UPDATE SET journal_slot = excluded.journal_slot"
       " WHERE journal_slot IS NULL RETURNING journal_slot"},
      {&journal_read_,
       "SELECT j.sequence, j.entry, j.agent_id FROM agents a JOIN journal j"
       " ON j.entry_key > a.journal_slot * 1099511627776 + ?2"
       " AND j.entry_key < (a.journal_slot + 1) * 1099511627776"
       " WHERE a.agent_id = ?1 ORDER BY j.entry_key"},
      {&journal_stats_,
       "SELECT count(j.entry_key), coalesce(sum(j.size_bytes), 0), coalesce(min(j.sequence), 0),"
       " max(coalesce(a.journal_last_sequence, 0), coalesce(max(j.sequence), 0))"
       " FROM (SELECT 1) LEFT JOIN agents a ON a.agent_id = ?1 LEFT JOIN journal j"
       " ON j.entry_key > a.journal_slot * 1099511627776"
       " AND j.entry_key < (a.journal_slot + 1) * 1099511627776"},
      // Before compaction deletes entries, the agent record keeps the newest sequence.
      {&journal_raise_,
       "UPDATE agents SET journal_last_sequence = max(journal_last_sequence, coalesce((SELECT"
       " sequence FROM journal WHERE entry_key > agents.journal_slot * 1099511627776"
       " AND entry_key < (agents.journal_slot + 1) * 1099511627776"
       " ORDER BY entry_key DESC LIMIT 1), 0)) WHERE agent_id = ?1"},
      {&journal_compact_,
       "DELETE FROM journal"
       " WHERE entry_key > (SELECT journal_slot * 1099511627776 FROM agents WHERE agent_id = ?1)"
       " AND entry_key <= (SELECT journal_slot * 1099511627776 FROM agents WHERE agent_id = ?1)"
       " + ?2"},
  };
  for (auto& p : prepared) RETURN_IF_ERROR(Prepare(p.sql, p.stmt));
  return OkStatus();
}

void SqliteStore::FinalizeJournal() {
  for (sqlite3_stmt* s : {journal_head_, journal_insert_, journal_assign_slot_, journal_read_,
                          journal_stats_, journal_raise_, journal_compact_}) {
    sqlite3_finalize(s);
  }
}

bool SqliteStore::DataVersionLocked(unsigned int* version) {
  return sqlite3_file_control(db_, "main", SQLITE_FCNTL_DATA_VERSION, version) == SQLITE_OK;
}

Status SqliteStore::ReadJournalHeadLocked(const std::string& agent_id, JournalHead* head) {
  StmtGuard g{journal_head_};
  Bind(journal_head_, 1, agent_id);
  int rc = sqlite3_step(journal_head_);
  if (rc != SQLITE_ROW) return Error("cannot read the agent record", rc);
  head->agent_id = agent_id;
  head->lease_holder = std::string(Column(journal_head_, 0));
  head->lease_epoch = sqlite3_column_int64(journal_head_, 1);
  head->last_sequence = sqlite3_column_int64(journal_head_, 2);
  head->slot = sqlite3_column_int64(journal_head_, 3);  // 0 when NULL: none yet
  return OkStatus();
}

Status SqliteStore::AppendJournal(const std::string& agent_id,
                                  const std::vector<JournalEntry>& entries,
                                  const std::optional<LeaseToken>& lease) {
  RETURN_IF_ERROR(CheckJournalEntries(agent_id, entries));
  if (entries.empty()) return OkStatus();
  if (entries.front().sequence < 1 || entries.back().sequence > kMaxJournalSequence) {
    return InvalidArgumentError("journal sequences " + std::to_string(entries.front().sequence) +
                                ".." + std::to_string(entries.back().sequence) +
                                " are outside the embedded store's 1.." +
                                std::to_string(kMaxJournalSequence));
  }
  std::vector<std::string> encoded;
  encoded.reserve(entries.size());
  for (const JournalEntry& e : entries) encoded.push_back(EncodeJournalEntry(e));
  std::lock_guard<std::mutex> lock(mu_);
  JournalHead head;
  Status appended =
      InTransactionLocked([&]() -> StatusOr<bool> {
        // Inside the write transaction no other connection can commit, and SQLite has already
        // compared the log with what this connection last saw: an unchanged data version means
        // the agent's row and the journal are as this connection's last append left them.
        unsigned int version = 0;
        const bool unchanged =
            journal_head_cache_.valid && journal_head_cache_.agent_id == agent_id &&
            DataVersionLocked(&version) && version == journal_head_cache_.data_version;
        if (unchanged) head = journal_head_cache_;
        journal_head_cache_.valid = false;  // until this append commits
        if (!unchanged) RETURN_IF_ERROR(ReadJournalHeadLocked(agent_id, &head));
        if (lease.has_value() &&
            (head.lease_holder != lease->holder || head.lease_epoch != lease->epoch)) {
          return FailedPreconditionError(
              LeaseLostMessage(*lease, head.lease_holder, head.lease_epoch));
        }
        if (entries.front().sequence <= head.last_sequence) {
          return AlreadyExistsError("journal sequence " + std::to_string(entries.front().sequence) +
                                    " of agent " + agent_id + " is not above the last appended " +
                                    std::to_string(head.last_sequence) +
                                    ": another writer got there");
        }
        if (head.slot == 0) {  // the agent's first append
          StmtGuard g{journal_assign_slot_};
          Bind(journal_assign_slot_, 1, agent_id);
          sqlite3_bind_int64(journal_assign_slot_, 2, options_.env->NowUnixMillis());
          int rc = sqlite3_step(journal_assign_slot_);
          if (rc != SQLITE_ROW) return Error("cannot give the agent a journal slot", rc);
          head.slot = sqlite3_column_int64(journal_assign_slot_, 0);
          if (head.slot < 1 || head.slot > kMaxJournalSlot) {
            return ResourceExhaustedError("the store file " + path_ + " has no journal slot " +
                                          "left for agent " + agent_id + " (slot " +
                                          std::to_string(head.slot) + ")");
          }
        }
        for (size_t i = 0; i < entries.size(); ++i) {
          StmtGuard g{journal_insert_};
          sqlite3_bind_int64(journal_insert_, 1, JournalKey(head.slot, entries[i].sequence));
          Bind(journal_insert_, 2, agent_id);
          sqlite3_bind_int64(journal_insert_, 3, entries[i].sequence);
          sqlite3_bind_int64(journal_insert_, 4, static_cast<int64_t>(encoded[i].size()));
          sqlite3_bind_blob(journal_insert_, 5, encoded[i].data(),
                            static_cast<int>(encoded[i].size()), SQLITE_STATIC);
          int rc = sqlite3_step(journal_insert_);
          if (rc != SQLITE_DONE) return Error("cannot append to the journal", rc);
        }
        return true;
      }).status();
  if (appended.ok() && DataVersionLocked(&head.data_version)) {
    head.last_sequence = entries.back().sequence;
    head.valid = true;
    journal_head_cache_ = std::move(head);
  }
  return appended;
}

StatusOr<std::vector<JournalEntry>> SqliteStore::ReadJournal(const std::string& agent_id,
                                                             int64_t after_sequence) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  std::lock_guard<std::mutex> lock(mu_);
  StmtGuard g{journal_read_};
  Bind(journal_read_, 1, agent_id);
  sqlite3_bind_int64(journal_read_, 2, std::clamp<int64_t>(after_sequence, 0, kMaxJournalSequence));
  std::vector<JournalEntry> out;
  int rc;
  while ((rc = sqlite3_step(journal_read_)) == SQLITE_ROW) {
    int64_t sequence = sqlite3_column_int64(journal_read_, 0);
    StatusOr<JournalEntry> e = DecodeJournalEntry(Column(journal_read_, 1));
    if (e.ok() && e->sequence == sequence && e->agent_id == agent_id &&
        Column(journal_read_, 2) == agent_id) {
      out.push_back(std::move(e).value());
    } else {
      JournalEntry damaged;  // the fold stops here
      damaged.agent_id = agent_id;
      damaged.sequence = sequence;
      out.push_back(std::move(damaged));
    }
  }
  if (rc != SQLITE_DONE) return Error("cannot read the journal", rc);
  return out;
}

StatusOr<JournalStats> SqliteStore::GetJournalStats(const std::string& agent_id) {
  RETURN_IF_ERROR(ValidateAgentId(agent_id));
  std::lock_guard<std::mutex> lock(mu_);
  StmtGuard g{journal_stats_};
  Bind(journal_stats_, 1, agent_id);
  int rc = sqlite3_step(journal_stats_);
  if (rc != SQLITE_ROW) return Error("cannot read the journal's size", rc);
  JournalStats s;
  s.entries = sqlite3_column_int64(journal_stats_, 0);
  s.bytes = sqlite3_column_int64(journal_stats_, 1);
  s.first_sequence = sqlite3_column_int64(journal_stats_, 2);
  s.last_sequence = sqlite3_column_int64(journal_stats_, 3);
  return s;
}

StatusOr<int64_t> SqliteStore::CompactJournalLocked(const std::string& agent_id, int64_t through) {
  {
    StmtGuard g{journal_raise_};
    Bind(journal_raise_, 1, agent_id);
    int rc = sqlite3_step(journal_raise_);
    if (rc != SQLITE_DONE) return Error("cannot keep the journal's high-water mark", rc);
  }
  StmtGuard g{journal_compact_};
  Bind(journal_compact_, 1, agent_id);
  sqlite3_bind_int64(journal_compact_, 2, std::clamp<int64_t>(through, 0, kMaxJournalSequence));
  int rc = sqlite3_step(journal_compact_);
  if (rc != SQLITE_DONE) return Error("cannot compact the journal", rc);
  return static_cast<int64_t>(sqlite3_changes(db_));
}

}  // namespace agentckpt
