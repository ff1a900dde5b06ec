#include "store/sqlite/sqlite_schema.h"

namespace agentckpt::internal {

namespace {

// Version 1. `document` holds the canonical JSON of the checkpoint without contentSha256 (the
// exact bytes that were hashed); the other columns are copies for queries and are cross-checked
// against the document when it is read.
constexpr char kV1[] = R"sql(
CREATE TABLE checkpoints (
  row_id          INTEGER PRIMARY KEY,
  agent_id        TEXT    NOT NULL,
  sequence        INTEGER NOT NULL,
  checkpoint_id   TEXT    NOT NULL UNIQUE,
  timestamp_ms    INTEGER NOT NULL,
  trigger_reason  TEXT    NOT NULL,
  size_bytes      INTEGER NOT NULL,
  expire_at_ms    INTEGER NOT NULL,
  content_sha256  TEXT    NOT NULL,
  document        BLOB    NOT NULL,
  UNIQUE (agent_id, sequence)
);
CREATE INDEX checkpoints_by_expiry ON checkpoints (expire_at_ms);
CREATE TABLE agents (
  agent_id        TEXT    PRIMARY KEY,
  status          TEXT    NOT NULL DEFAULT '',
  updated_at_ms   INTEGER NOT NULL DEFAULT 0,
  last_sequence   INTEGER NOT NULL DEFAULT 0
);
)sql";

// Version 2: the agent's writer lease (see CheckpointStore::AcquireLease).
constexpr char kV2[] = R"sql(
ALTER TABLE agents ADD COLUMN lease_holder TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN lease_expires_at_ms INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 3: the write-ahead journal between checkpoints (docs/journal.md). `entry` holds the
// entry's stored form (journal/journal_entry.h); the agent's journal high-water mark survives
// compaction so a sequence is never reused.
constexpr char kV3[] = R"sql(
CREATE TABLE journal (
  agent_id    TEXT    NOT NULL,
  sequence    INTEGER NOT NULL,
  size_bytes  INTEGER NOT NULL,
  entry       BLOB    NOT NULL,
  PRIMARY KEY (agent_id, sequence)
) WITHOUT ROWID;
ALTER TABLE agents ADD COLUMN journal_last_sequence INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 4: the journal as a rowid table. In the version 3 layout (an index b-tree) an entry of
// more than about 1,000 bytes spills into an overflow page taken from the free list, so each
// append rewrote four pages (leaf, overflow, free-list trunk, header); a rowid table keeps an
// entry of up to about 4,000 bytes in its leaf, and an append writes the leaf and one index page.
// The entries are copied in order; a sequence stays unique per agent.
constexpr char kV4[] = R"sql(
CREATE TABLE journal_v4 (
  row_id      INTEGER PRIMARY KEY,
  agent_id    TEXT    NOT NULL,
  sequence    INTEGER NOT NULL,
  size_bytes  INTEGER NOT NULL,
  entry       BLOB    NOT NULL,
  UNIQUE (agent_id, sequence)
);
INSERT INTO journal_v4 (agent_id, sequence, size_bytes, entry)
  SELECT agent_id, sequence, size_bytes, entry FROM journal ORDER BY agent_id, sequence;
DROP TABLE journal;
ALTER TABLE journal_v4 RENAME TO journal;
)sql";

// Version 5: one b-tree per append. The row's key is the agent's journal slot (a small number
// given to the agent at its first append, unique in the file) times 2^40 plus the entry's
// sequence, so an agent's entries are one contiguous key range of the table itself and the
// (agent_id, sequence) index is gone: an append writes the table's leaf and nothing else, where
// version 4 also wrote an index page (one 4 KB WAL frame fewer per synced append). agent_id and
// sequence stay as columns, checked on every read. Journal rows of an agent without a record
// get one first, so the copy drops nothing.
constexpr char kV5[] = R"sql(
INSERT OR IGNORE INTO agents (agent_id) SELECT DISTINCT agent_id FROM journal;
ALTER TABLE agents ADD COLUMN journal_slot INTEGER;
UPDATE agents SET journal_slot = rowid;
CREATE UNIQUE INDEX agents_by_journal_slot ON agents (journal_slot);
CREATE TABLE journal_v5 (
  entry_key   INTEGER PRIMARY KEY,
  agent_id    TEXT    NOT NULL,
  sequence    INTEGER NOT NULL,
  size_bytes  INTEGER NOT NULL,
  entry       BLOB    NOT NULL
);
INSERT INTO journal_v5 (entry_key, agent_id, sequence, size_bytes, entry)
  SELECT a.journal_slot * 1099511627776 + j.sequence, j.agent_id, j.sequence, j.size_bytes, j.entry
  FROM journal j JOIN agents a ON a.agent_id = j.agent_id ORDER BY 1;
DROP TABLE journal;
ALTER TABLE journal_v5 RENAME TO journal;
)sql";

const Migration kMigrations[] = {
    {1, "checkpoints and agents tables", kV1},
    {2, "agent writer lease", kV2},
    {3, "write-ahead journal", kV3},
    {4, "journal as a rowid table", kV4},
    {5, "journal keyed by agent slot and sequence", kV5},
};

}  // namespace

const Migration* SqliteMigrations(int* count) {
  *count = static_cast<int>(sizeof(kMigrations) / sizeof(kMigrations[0]));
  return kMigrations;
}

}  // namespace agentckpt::internal
