// Mastra's LibSQL store (@mastra/core storage API, @mastra/libsql) on a file: database in --dir,
// WAL with synchronous=FULL. The store sets synchronous=NORMAL itself when it starts; FULL is set
// after init() on the client the store uses, and checked before and after the measured loop.
//
//   write:       workflows.persistWorkflowSnapshot({workflowName, runId, snapshot}), the
//                snapshot's step output holding the fixture document
//   load-latest: workflows.loadWorkflowSnapshot({workflowName, runId})
//
//   node mastra.mjs --fixture FILE --dir DIR [--iterations N] [--warmup N]

import { LibSQLStore } from '@mastra/libsql';
import {
  databasePath, loadFixture, measure, packageVersion, parsePeerArgs, report,
} from './lib/peer_harness.mjs';

// No usage reporting from the benchmark (Mastra reads this when it would send an event).
process.env.MASTRA_TELEMETRY_DISABLED ??= '1';

const opts = parsePeerArgs(process.argv.slice(2));
const db = databasePath(opts.dir, 'mastra', opts.fixture);
const store = new LibSQLStore({ id: 'agentckpt-bench', url: `file:${db.file}` });
await store.init();
const workflows = await store.getStore('workflows');

const pragma = async (name) => Object.values((await store.client.execute(`PRAGMA ${name}`)).rows[0])[0];
await store.client.execute('PRAGMA synchronous = FULL');
const pragmas = async () => ({
  journal_mode: await pragma('journal_mode'),
  synchronous: Number(await pragma('synchronous')),
});
const before = await pragmas();
if (before.journal_mode !== 'wal' || before.synchronous !== 2) {
  throw new Error(`LibSQL store database not durable: ${JSON.stringify(before)}`);
}

const workflowName = 'agent-marketing-prod';
const runId = 'task-4521';
const startedAt = Date.now();
const side = {
  // A workflow run state as Mastra persists it while the run is in progress, the fixture being
  // the output of its one step.
  prepare(i, doc) {
    const now = Date.now();
    return {
      runId,
      status: 'running',
      value: {},
      context: {
        input: {},
        checkpoint: { status: 'success', output: doc, startedAt, endedAt: now },
      },
      activePaths: [0],
      activeStepsPath: { checkpoint: [0] },
      serializedStepGraph: [{ type: 'step', step: { id: 'checkpoint' } }],
      suspendedPaths: {},
      resumeLabels: {},
      waitingPaths: {},
      timestamp: now,
    };
  },
  async write(i, snapshot) {
    await workflows.persistWorkflowSnapshot({ workflowName, runId, snapshot });
  },
  async load() {
    const snapshot = await workflows.loadWorkflowSnapshot({ workflowName, runId });
    return snapshot?.context.checkpoint.output;
  },
};

const result = await measure(opts, loadFixture(opts.fixture), side);
const after = await pragmas();
if (after.synchronous !== 2) throw new Error(`synchronous changed during the run: ${after.synchronous}`);
report({
  side: 'mastra',
  fixture: opts.fixture,
  warmup: opts.warmup,
  ...result,
  pragmas: after,
  sqlite: Object.values((await store.client.execute('select sqlite_version()')).rows[0])[0],
  packages: Object.fromEntries(
    ['@mastra/core', '@mastra/libsql', '@libsql/client', 'libsql'].map((p) => [p, packageVersion(p)])),
});
store.client.close();
db.remove();
