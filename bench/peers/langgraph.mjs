// LangGraph's SqliteSaver (@langchain/langgraph-checkpoint-sqlite, better-sqlite3) on a file in
// --dir, WAL with synchronous=FULL set on the saver's own database handle.
//
//   write:       saver.put(config, checkpoint, metadata, newVersions), the checkpoint's
//                channel_values holding the fixture document
//   load-latest: saver.getTuple({configurable: {thread_id}})
//
//   node langgraph.mjs --fixture FILE --dir DIR [--iterations N] [--warmup N]

import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import {
  databasePath, loadFixture, measure, packageVersion, parsePeerArgs, report,
} from './lib/peer_harness.mjs';

const opts = parsePeerArgs(process.argv.slice(2));
const db = databasePath(opts.dir, 'langgraph', opts.fixture);
const saver = SqliteSaver.fromConnString(db.file);
saver.setup();  // creates the tables and switches the database to WAL
saver.db.pragma('synchronous = FULL');

const pragmas = () => ({
  journal_mode: saver.db.pragma('journal_mode', { simple: true }),
  synchronous: saver.db.pragma('synchronous', { simple: true }),
});
const before = pragmas();
if (before.journal_mode !== 'wal' || before.synchronous !== 2) {
  throw new Error(`SqliteSaver database not durable: ${JSON.stringify(before)}`);
}

const threadId = 'agent-marketing-prod';
let parentId;
const side = {
  // A checkpoint as a graph step writes it: a new time-ordered id, the fixture as the value of
  // one channel, and that channel's new version.
  prepare(i, doc) {
    const checkpoint = emptyCheckpoint();
    checkpoint.id = uuid6(-1);
    checkpoint.ts = new Date().toISOString();
    checkpoint.channel_values = { checkpoint: doc };
    checkpoint.channel_versions = { checkpoint: i + 1 };
    const config = { configurable: { thread_id: threadId, checkpoint_ns: '' } };
    if (parentId) config.configurable.checkpoint_id = parentId;
    parentId = checkpoint.id;
    return {
      config,
      checkpoint,
      metadata: { source: 'loop', step: i, parents: {} },
      newVersions: { checkpoint: i + 1 },
    };
  },
  async write(i, input) {
    await saver.put(input.config, input.checkpoint, input.metadata, input.newVersions);
  },
  async load() {
    const tuple = await saver.getTuple({ configurable: { thread_id: threadId } });
    return tuple?.checkpoint.channel_values.checkpoint;
  },
};

const result = await measure(opts, loadFixture(opts.fixture), side);
const after = pragmas();
if (after.synchronous !== 2) throw new Error(`synchronous changed during the run: ${after.synchronous}`);
report({
  side: 'langgraph',
  fixture: opts.fixture,
  warmup: opts.warmup,
  ...result,
  pragmas: after,
  sqlite: saver.db.prepare('select sqlite_version() as v').get().v,
  packages: Object.fromEntries(
    ['@langchain/langgraph-checkpoint-sqlite', '@langchain/langgraph-checkpoint',
      '@langchain/core', 'better-sqlite3'].map((p) => [p, packageVersion(p)])),
});
saver.db.close();
db.remove();
